/**
 * The per-stream hash chain: `hash = sha256(prev_hash || canonical_bytes(event))`, with 32 zero
 * bytes as the `prev_hash` of a stream's first event. The canonical bytes cover the envelope too
 * (id, stream, version, type, schema version), so editing any stored column breaks the chain.
 *
 * @example
 * ```ts
 * const { json, tensors } = encodeCanonical({ step: 0 });
 * const hash = chainHash(GENESIS_HASH, {
 *   id: "ab12...", stream: "run-1", version: 1, type: "step.started", schemaVersion: 1,
 *   data: json, tensors,
 * });
 * ```
 */
import { createHash } from "node:crypto";

/** The `prev_hash` of a stream's first event (32 zero bytes, hex). */
export const GENESIS_HASH = "0".repeat(64);

/** The stored parts of an event that its hash covers. */
export interface HashedParts {
  readonly id: string;
  readonly stream: string;
  readonly version: number;
  readonly type: string;
  readonly schemaVersion: number;
  /** canonical JSON of the data */
  readonly data: string;
  /** little-endian typed-array bytes of the data */
  readonly tensors: Uint8Array;
}

/**
 * The canonical JSON of the envelope: the same bytes `encodeCanonical` would give the object
 * `{data, id, schemaVersion, stream, type, version}`, built by concatenation because the data is
 * already canonical. The event's canonical bytes are this text (UTF-8) followed by its tensors.
 */
export function envelopeJson(e: HashedParts): string {
  return `{"data":${e.data},"id":${JSON.stringify(e.id)},"schemaVersion":${e.schemaVersion},` +
    `"stream":${JSON.stringify(e.stream)},"type":${JSON.stringify(e.type)},"version":${e.version}}`;
}

/** `sha256(prev_hash || canonical_bytes(event))` as lowercase hex. */
export function chainHash(prevHash: string, e: HashedParts): string {
  return createHash("sha256")
    .update(Buffer.from(prevHash, "hex"))
    .update(envelopeJson(e), "utf8")
    .update(e.tensors)
    .digest("hex");
}

/** SHA-256 of bytes or UTF-8 text, lowercase hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex");
}
