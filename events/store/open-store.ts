/**
 * Opens an event store by URL or path: `postgres://` and `postgresql://` URLs open the Postgres
 * store, a path without a URL scheme the SQLite file, any other URL is refused (store-target.ts).
 * For writing, an SQLite file that exists must already be a store. Commands that only read (verify, sql, report,
 * export, replay, web) open with `readOnly`: the store must exist, is never created, migrated or
 * written, and reading needs read rights only.
 *
 * @example
 * ```ts
 * import { openStore } from "./open-store.ts";
 *
 * const local = await openStore(".polyrl/events.sqlite");
 * const shared = await openStore("postgres://postgres@127.0.0.1:5432/postgres?schema=lab");
 * const existing = await openStore("runs.sqlite", { create: false }); // absent: StoreNotFoundError
 * const reading = await openStore("runs.sqlite", { readOnly: true }); // appends are refused
 * ```
 */
import type { AnyEvent, Catalogue } from "../define-event.ts";
import { type NewEvent, runCatalogue } from "../catalogue.ts";
import type { EventStore } from "./event-store.ts";
import { LogStore } from "./log-store.ts";
import { openSqliteBackend } from "./sqlite-backend.ts";
import { parseStoreTarget } from "./store-target.ts";

/** Options of `openStore`. */
export interface OpenStoreOptions<N extends AnyEvent> {
  /** make a missing store: its SQLite file and folder, or Postgres schema (default true) */
  readonly create?: boolean;
  /**
   * open an existing store for reading only (default false): nothing is created or migrated,
   * and appends are refused with StoreReadOnlyError
   */
  readonly readOnly?: boolean;
  /** the event catalogue to validate and upcast with (default: the run catalogue) */
  readonly catalogue?: Catalogue<N>;
}

/**
 * Opens (for writing: creating and migrating as needed) the store at `target`. Throws
 * StoreTargetError for a target that names no store, StoreOpenError or one of its subclasses:
 * StoreNotFoundError, NotAnEventStoreError, StoreCorruptError, StoreVersionError.
 */
export async function openStore<N extends AnyEvent = NewEvent>(
  target: string,
  options: OpenStoreOptions<N> = {},
): Promise<EventStore<N>> {
  const mode = { create: options.create ?? true, readOnly: options.readOnly ?? false };
  const where = parseStoreTarget(target);
  // pg and its dependencies load only for a Postgres store (most runs use SQLite).
  const backend = where.kind === "postgres"
    ? await (await import("./postgres-backend.ts")).openPostgresBackend(where.url, mode)
    : await openSqliteBackend(where.path, mode);
  const catalogue = options.catalogue ?? (runCatalogue as unknown as Catalogue<N>);
  return new LogStore(backend, catalogue);
}
