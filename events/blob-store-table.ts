/**
 * The table-backed blob store: blobs in the log's own `blobs` table, so a Postgres log shared by
 * several machines carries its state with it. Works on any dialect the log runs on.
 *
 * @example
 * ```ts
 * import type { Kysely } from "kysely";
 * import { tableBlobStore } from "./blob-store-table.ts";
 * import type { LogDatabase } from "./store/schema.ts";
 *
 * declare const kysely: Kysely<LogDatabase>;
 * declare const weights: Uint8Array;
 * const blobs = tableBlobStore(kysely);
 * const key = await blobs.put(weights);
 * ```
 */
import { type Kysely, sql } from "kysely";
import { BlobNotFoundError } from "./errors.ts";
import { assertBlobKey, type BlobStore, checkBlob, verifiedBlob } from "./blob-store.ts";
import { sha256Hex } from "./hash-chain.ts";
import type { LogDatabase } from "./store/schema.ts";

/** A blob store over the `blobs` table of a migrated log database. */
export function tableBlobStore(db: Kysely<LogDatabase>): BlobStore {
  const read = async (hash: string) => {
    const row = await db.selectFrom("blobs").select("bytes").where("hash", "=", assertBlobKey(hash))
      .executeTakeFirst();
    return row ? new Uint8Array(row.bytes) : undefined;
  };
  return Object.freeze({
    kind: "table" as const,
    async put(bytes: Uint8Array) {
      const hash = sha256Hex(bytes);
      // An intact copy makes this a no-op; a damaged one is replaced.
      await db.insertInto("blobs").values({ hash, size: bytes.length, bytes })
        .onConflict((oc) =>
          oc.column("hash").doUpdateSet({ bytes: (eb) => eb.ref("excluded.bytes") })
            .where(sql<boolean>`blobs.bytes <> excluded.bytes`)
        ).execute();
      return hash;
    },
    async get(hash: string) {
      const bytes = await read(hash);
      if (bytes === undefined) throw new BlobNotFoundError(hash);
      return verifiedBlob(hash, bytes);
    },
    async has(hash: string) {
      const row = await db.selectFrom("blobs").select("hash").where(
        "hash",
        "=",
        assertBlobKey(hash),
      )
        .executeTakeFirst();
      return row !== undefined;
    },
    check: (hash: string) => checkBlob(read, hash),
  });
}
