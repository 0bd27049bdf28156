/**
 * Content-addressed storage for large state (weights, optimizer moments): a blob's key is the
 * SHA-256 of its bytes, and every read re-hashes the bytes, so a damaged copy is never returned.
 * Events refer to blobs by key; `verify` checks each reference.
 *
 * @example
 * ```ts
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore;
 * declare const weights: Uint8Array;
 * const key = await store.blobs.put(weights); // 64 hex digits
 * const same = await store.blobs.get(key);    // throws BlobIntegrityError if damaged
 * ```
 */
import { BlobIntegrityError } from "./errors.ts";
import { sha256Hex } from "./hash-chain.ts";

/** The state of one blob as `check` finds it. */
export type BlobStatus = "ok" | "missing" | "damaged";

/** A content-addressed blob store. */
export interface BlobStore {
  readonly kind: "filesystem" | "table";
  /** Stores bytes (a no-op when present) and returns their SHA-256 key. */
  put(bytes: Uint8Array): Promise<string>;
  /** The bytes under `hash`; throws BlobNotFoundError or BlobIntegrityError. */
  get(hash: string): Promise<Uint8Array>;
  /** Whether a blob is present, without reading it. */
  has(hash: string): Promise<boolean>;
  /** Reads and re-hashes a blob. */
  check(hash: string): Promise<BlobStatus>;
}

/** Returns `bytes` if they hash to `hash`, else throws BlobIntegrityError. */
export function verifiedBlob(hash: string, bytes: Uint8Array): Uint8Array {
  const actual = sha256Hex(bytes);
  if (actual !== hash) throw new BlobIntegrityError(hash, actual);
  return bytes;
}

/** `check` in terms of `get`, for stores whose read already verifies. */
export async function checkBlob(
  get: (hash: string) => Promise<Uint8Array | undefined>,
  hash: string,
): Promise<BlobStatus> {
  const bytes = await get(hash);
  if (bytes === undefined) return "missing";
  return sha256Hex(bytes) === hash ? "ok" : "damaged";
}

const KEY = /^[0-9a-f]{64}$/;

/** Rejects anything but a SHA-256 hex key (keys become file names). */
export function assertBlobKey(hash: string): string {
  if (!KEY.test(hash)) throw new TypeError(`blob key must be 64 lowercase hex digits; got ${hash}`);
  return hash;
}
