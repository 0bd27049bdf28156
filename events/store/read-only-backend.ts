/**
 * A backend opened for reading: every read passes through, every write (an append, a blob put)
 * is refused with StoreReadOnlyError before it reaches the database, so a read-only command can
 * never change the store it reads, even by mistake.
 *
 * @example
 * ```ts
 * import { readOnlyBackend } from "./read-only-backend.ts";
 * import { openSqliteBackend } from "./sqlite-backend.ts";
 *
 * const path = ".polyrl/events.sqlite";
 * const backend = readOnlyBackend(await openSqliteBackend(path, { create: false, readOnly: true }));
 * ```
 */
import { StoreReadOnlyError } from "../errors.ts";
import type { BlobStore } from "../blob-store.ts";
import type { Backend } from "./backend.ts";

/** `backend` with its writes refused. */
export function readOnlyBackend(backend: Backend): Backend {
  const refuse = (operation: string) =>
    Promise.reject(new StoreReadOnlyError(backend.target, operation));
  const blobs: BlobStore = Object.freeze({
    kind: backend.blobs.kind,
    put: () => refuse("store a blob"),
    get: (hash: string) => backend.blobs.get(hash),
    has: (hash: string) => backend.blobs.has(hash),
    check: (hash: string) => backend.blobs.check(hash),
  });
  return {
    kind: backend.kind,
    target: backend.target,
    storeId: backend.storeId,
    readOnly: true,
    blobs,
    write: () => refuse("append events"),
    readAll: (from, limit) => backend.readAll(from, limit),
    readStream: (stream, fromVersion, limit) => backend.readStream(stream, fromVersion, limit),
    head: (stream) => backend.head(stream),
    heads: () => backend.heads(),
    lastPosition: () => backend.lastPosition(),
    putLease: () => refuse("record a run lease"),
    leases: () => backend.leases(),
    watch: backend.watch && ((onAppend) => backend.watch!(onAppend)),
    close: () => backend.close(),
  };
}
