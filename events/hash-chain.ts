/**
 * The per-stream hash chain: `hash = sha256(prev_hash || canonical_bytes(event))`, with 32 zero
 * bytes as the `prev_hash` of a stream's first event. The canonical bytes cover the envelope too
 * (id, stream, version, type, schema version), so editing any stored column breaks the chain.
 *
 * @example
 * ```ts
 * import { encodeCanonical } from "./canonical.ts";
 * import { chainHash, GENESIS_HASH } from "./hash-chain.ts";
 *
 * const { json, tensors } = encodeCanonical({ step: 0 });
 * const hash = chainHash(GENESIS_HASH, {
 *   id: "ab12...", stream: "run-1", version: 1, type: "step.started", schemaVersion: 1,
 *   data: json, tensors,
 * });
 * ```
 */
import { hash } from "node:crypto";
import { quoteString } from "./canonical.ts";

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
  return `{"data":${e.data},"id":${quoteString(e.id)},"schemaVersion":${e.schemaVersion},` +
    `"stream":${quoteString(e.stream)},"type":${quoteString(e.type)},"version":${e.version}}`;
}

// The message is assembled in one reused buffer and hashed with the one-shot `hash`: in Deno
// that is about twice as fast as a createHash object fed in parts.
let scratch = new Uint8Array(1 << 16);
const utf8 = new TextEncoder();
const HEX_VALUE = new Uint8Array(128);
for (let i = 0; i < 16; i++) HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;

/** `sha256(prev_hash || canonical_bytes(event))` as lowercase hex. */
export function chainHash(prevHash: string, e: HashedParts): string {
  const json = envelopeJson(e);
  const need = 32 + json.length * 3 + e.tensors.length;
  if (scratch.length < need) scratch = new Uint8Array(need * 2);
  for (let i = 0; i < 32; i++) {
    scratch[i] = (HEX_VALUE[prevHash.charCodeAt(2 * i)] << 4) |
      HEX_VALUE[prevHash.charCodeAt(2 * i + 1)];
  }
  let n = 32 + utf8.encodeInto(json, scratch.subarray(32)).written;
  scratch.set(e.tensors, n);
  n += e.tensors.length;
  return hash("sha256", scratch.subarray(0, n), "hex");
}

/** SHA-256 of bytes or UTF-8 text, lowercase hex. */
export function sha256Hex(data: Uint8Array | string): string {
  return hash("sha256", data, "hex");
}
