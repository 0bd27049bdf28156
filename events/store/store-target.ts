/**
 * What a store argument names: a Postgres server (`postgres://` or `postgresql://`) or an SQLite
 * file path. Any other `scheme://` is refused rather than read as a relative path: `mysql://x/y`
 * would otherwise become an SQLite file in the folders `mysql:/x/`.
 *
 * @example
 * ```ts
 * import { parseStoreTarget } from "./store-target.ts";
 *
 * parseStoreTarget("runs.sqlite"); // { kind: "sqlite", path: "runs.sqlite" }
 * parseStoreTarget("postgres://db/lab"); // { kind: "postgres", url: "postgres://db/lab" }
 * parseStoreTarget("mysql://db/lab"); // StoreTargetError
 * ```
 */
import { StoreTargetError } from "../errors.ts";

/**
 * Default location of the embedded store: a `.polyrl` folder in the repository root, where
 * `deno task` runs every command, so that tasks run from any subdirectory share one store.
 */
export const DEFAULT_STORE = ".polyrl/events.sqlite";

/** Where a store lives. */
export type StoreTarget =
  | { readonly kind: "postgres"; readonly url: string }
  | { readonly kind: "sqlite"; readonly path: string };

const URL_SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;
const POSTGRES_SCHEMES = new Set(["postgres", "postgresql"]);

/** Whether `target` names a Postgres server rather than an SQLite file. */
export function isPostgresUrl(target: string): boolean {
  const scheme = URL_SCHEME.exec(target)?.[1];
  return scheme !== undefined && POSTGRES_SCHEMES.has(scheme);
}

/** The store `target` names; a StoreTargetError for an empty one or an unknown URL scheme. */
export function parseStoreTarget(target: string): StoreTarget {
  if (target.trim() === "") throw new StoreTargetError(target, "it is empty");
  const scheme = URL_SCHEME.exec(target)?.[1];
  if (scheme === undefined) return { kind: "sqlite", path: target };
  if (POSTGRES_SCHEMES.has(scheme)) return { kind: "postgres", url: target };
  throw new StoreTargetError(target, `${scheme}:// is not a store's URL scheme`);
}
