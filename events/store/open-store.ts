/**
 * Opens an event store by URL or path: `postgres://` and `postgresql://` URLs open the Postgres
 * store, anything else is an SQLite file path.
 *
 * @example
 * ```ts
 * const local = await openStore(".polyrl/events.sqlite");
 * const shared = await openStore("postgres://postgres@127.0.0.1:5432/postgres?schema=lab");
 * const existing = await openStore("runs.sqlite", { create: false }); // StoreOpenError if absent
 * ```
 */
import type { AnyEvent, Catalogue } from "../define-event.ts";
import { type NewEvent, runCatalogue } from "../catalogue.ts";
import type { EventStore } from "./event-store.ts";
import { LogStore } from "./log-store.ts";
import { openSqliteBackend } from "./sqlite-backend.ts";
import { openPostgresBackend } from "./postgres-backend.ts";

/** Options of `openStore`. */
export interface OpenStoreOptions<N extends AnyEvent> {
  /** create an SQLite file that does not exist yet (default true) */
  readonly create?: boolean;
  /** the event catalogue to validate and upcast with (default: the run catalogue) */
  readonly catalogue?: Catalogue<N>;
}

/** Whether `target` names a Postgres server rather than an SQLite file. */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(ql)?:\/\//.test(target);
}

/** Opens (creating and migrating as needed) the store at `target`; throws StoreOpenError. */
export async function openStore<N extends AnyEvent = NewEvent>(
  target: string,
  options: OpenStoreOptions<N> = {},
): Promise<EventStore<N>> {
  const backend = isPostgresUrl(target)
    ? await openPostgresBackend(target)
    : await openSqliteBackend(target, { create: options.create ?? true });
  const catalogue = options.catalogue ?? (runCatalogue as unknown as Catalogue<N>);
  return new LogStore(backend, catalogue);
}
