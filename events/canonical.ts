/**
 * Canonical encoding of event data: the exact bytes that are stored and hashed.
 *
 * An event's data encodes to two parts:
 * - `json`: JSON with object keys sorted by UTF-16 code unit, no whitespace, numbers in
 *   ECMAScript's shortest round-trip form; `NaN`, `Infinity`, `-Infinity` and `-0` written
 *   explicitly as `{"$f":"NaN"}` etc., since JSON has no spelling for them;
 * - `tensors`: the bytes of every typed array, little-endian, each starting at a multiple of 8,
 *   referenced from the JSON as `{"$i32":[byteOffset,length]}` (`$f32`, `$f64` likewise).
 *   Token ids and logprobs thus cost 4 bytes each instead of a decimal number list.
 *
 * Only plain objects, arrays, strings, finite or non-finite numbers, booleans, null and
 * Int32Array/Float32Array/Float64Array are accepted: values that carry a locale or timezone
 * (Date) or that JSON cannot round-trip (bigint, Map) are rejected with the path that holds them.
 * Keys starting with `$` are reserved for the markers above.
 *
 * @example
 * ```ts
 * import { decodeCanonical, encodeCanonical } from "./canonical.ts";
 *
 * const { json, tensors } = encodeCanonical({ b: 1, a: new Int32Array([7, 8]), c: NaN });
 * // json === '{"a":{"$i32":[0,2]},"b":1,"c":{"$f":"NaN"}}', tensors.length === 8
 * const back = decodeCanonical(json, tensors); // { a: Int32Array [7, 8], b: 1, c: NaN }
 * // `tensors` may be a view into a shared buffer, and decoded typed arrays views into
 * // `tensors` (no copies): copy them before mutating.
 * ```
 */
import { CanonicalEncodingError } from "./errors.ts";

/** A value that canonical encoding accepts. */
export type CanonicalValue =
  | null
  | boolean
  | number
  | string
  | Int32Array
  | Float32Array
  | Float64Array
  | readonly CanonicalValue[]
  | { readonly [key: string]: CanonicalValue | undefined };

/** The two stored parts of canonically encoded data. */
export interface EncodedData {
  readonly json: string;
  readonly tensors: Uint8Array;
}

type TensorTag = "$i32" | "$f32" | "$f64";
type Tensor = Int32Array | Float32Array | Float64Array;

const HOST_LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const EMPTY = new Uint8Array(0);

function tensorTag(value: unknown): TensorTag | undefined {
  if (value instanceof Int32Array) return "$i32";
  if (value instanceof Float32Array) return "$f32";
  if (value instanceof Float64Array) return "$f64";
  return undefined;
}

function encodeNumber(n: number): string {
  if (Number.isFinite(n)) return Object.is(n, -0) ? '{"$f":"-0"}' : String(n);
  return `{"$f":"${String(n)}"}`;
}

// Keys repeat across events (field names, agent and metric names): quoting each once saves a
// JSON.stringify call per key. Bounded so that data-valued keys cannot grow it without limit.
const quotedKeys = new Map<string, string>();

function quoteKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    if (quotedKeys.size >= 4096) quotedKeys.clear();
    quoted = JSON.stringify(key);
    quotedKeys.set(key, quoted);
  }
  return quoted;
}

// Short strings with nothing to escape (names, ids, answers) are quoted directly: the same
// bytes JSON.stringify gives, without its per-call cost.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `JSON.stringify(v)` for a string, with a fast path for short strings that need no escapes. */
export function quoteString(v: string): string {
  return v.length <= 64 && PLAIN.test(v) ? `"${v}"` : JSON.stringify(v);
}

/** Encodes `value` canonically; throws CanonicalEncodingError naming the offending path. */
export function encodeCanonical(value: unknown): EncodedData {
  const tensors: Tensor[] = [];
  let size = 0;
  // The path of the value being encoded, as a stack: joined only to name a rejected value.
  const path: (string | number)[] = [];
  const fail = (reason: string): never => {
    const at = path.map((p) => typeof p === "number" ? `[${p}]` : `.${p}`).join("");
    throw new CanonicalEncodingError(at, reason);
  };
  const walk = (v: unknown): string => {
    switch (typeof v) {
      case "string":
        return quoteString(v);
      case "number":
        return encodeNumber(v);
      case "boolean":
        return v ? "true" : "false";
      case "object": {
        if (v === null) return "null";
        if (Array.isArray(v)) {
          let out = "[";
          for (let i = 0; i < v.length; i++) {
            path.push(i);
            out += (i > 0 ? "," : "") + walk(v[i] === undefined ? fail("undefined") : v[i]);
            path.pop();
          }
          return out + "]";
        }
        const tag = tensorTag(v);
        if (tag) {
          const t = v as Tensor;
          size = Math.ceil(size / 8) * 8;
          const ref = `{"${tag}":[${size},${t.length}]}`;
          tensors.push(t);
          size += t.byteLength;
          return ref;
        }
        const proto = Object.getPrototypeOf(v);
        if (proto !== Object.prototype && proto !== null) {
          fail(`${(v as object).constructor?.name ?? "object"} is not a plain value`);
        }
        const keys = Object.keys(v).sort();
        let out = "{";
        for (const key of keys) {
          const item = (v as Record<string, unknown>)[key];
          if (item === undefined) continue;
          path.push(key);
          if (key.charCodeAt(0) === 36) fail("keys starting with $ are reserved");
          out += `${out.length > 1 ? "," : ""}${quoteKey(key)}:${walk(item)}`;
          path.pop();
        }
        return out + "}";
      }
      default:
        return fail(`${typeof v} is not encodable`);
    }
  };
  const json = walk(value);
  return { json, tensors: tensors.length === 0 ? EMPTY : packTensors(tensors, size) };
}

// Tensor bytes are carved from shared 1 MiB slabs: a fresh ArrayBuffer per event costs as much
// as encoding the rest of it. Slabs are never reused, so padding bytes stay zero.
const SLAB = 1 << 20;
let slab = new Uint8Array(SLAB);
let slabUsed = 0;

function allocate(size: number): Uint8Array {
  if (size > SLAB / 8) return new Uint8Array(size);
  if (slabUsed + size > SLAB) {
    slab = new Uint8Array(SLAB);
    slabUsed = 0;
  }
  const out = slab.subarray(slabUsed, slabUsed + size);
  slabUsed += Math.ceil(size / 8) * 8;
  return out;
}

function packTensors(tensors: readonly Tensor[], size: number): Uint8Array {
  const bytes = allocate(size);
  let offset = 0;
  for (const t of tensors) {
    offset = Math.ceil(offset / 8) * 8;
    if (HOST_LITTLE_ENDIAN) {
      bytes.set(new Uint8Array(t.buffer, t.byteOffset, t.byteLength), offset);
    } else {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const width = t.BYTES_PER_ELEMENT;
      for (let i = 0; i < t.length; i++) {
        const at = offset + i * width;
        if (t instanceof Int32Array) view.setInt32(at, t[i], true);
        else if (t instanceof Float32Array) view.setFloat32(at, t[i], true);
        else view.setFloat64(at, t[i], true);
      }
    }
    offset += t.byteLength;
  }
  return bytes;
}

const TENSOR_CTORS = {
  $i32: Int32Array,
  $f32: Float32Array,
  $f64: Float64Array,
} as const;

function readTensor(tag: TensorTag, ref: unknown, tensors: Uint8Array): Tensor {
  const Ctor = TENSOR_CTORS[tag];
  if (!Array.isArray(ref) || ref.length !== 2) {
    throw new CanonicalEncodingError(tag, "tensor reference is not [byteOffset, length]");
  }
  const offset = ref[0] as number;
  const length = ref[1] as number;
  const byteLength = length * Ctor.BYTES_PER_ELEMENT;
  if (offset < 0 || offset + byteLength > tensors.byteLength) {
    throw new CanonicalEncodingError(tag, `tensor [${offset}, ${length}] lies outside its bytes`);
  }
  const start = tensors.byteOffset + offset;
  if (HOST_LITTLE_ENDIAN) {
    // Offsets are 8-aligned within the bytes, so when the bytes start aligned (as a freshly read
    // row does) the array is a view and decoding copies nothing.
    return start % 8 === 0
      ? new Ctor(tensors.buffer as ArrayBuffer, start, length)
      : new Ctor(tensors.slice(offset, offset + byteLength).buffer);
  }
  const bytes = tensors.slice(offset, offset + byteLength);
  const out = new Ctor(length);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < length; i++) {
    out[i] = tag === "$i32"
      ? view.getInt32(i * 4, true)
      : tag === "$f32"
      ? view.getFloat32(i * 4, true)
      : view.getFloat64(i * 8, true);
  }
  return out;
}

const NON_FINITE: Record<string, number> = {
  NaN: NaN,
  Infinity: Infinity,
  "-Infinity": -Infinity,
  "-0": -0,
};

function hasOneKey(record: object): boolean {
  let n = 0;
  for (const _ in record) if (++n > 1) return false;
  return true;
}

function readMarker(key: string, value: unknown, tensors: Uint8Array): number | Tensor {
  if (key === "$f") {
    const n = NON_FINITE[value as string];
    if (n === undefined) throw new CanonicalEncodingError("$f", `unknown float ${value}`);
    return n;
  }
  if (key in TENSOR_CTORS) return readTensor(key as TensorTag, value, tensors);
  throw new CanonicalEncodingError(key, "unknown marker");
}

// Walks a parsed document in place, replacing markers (objects whose one key starts with `$`).
// `for...in` rather than Object.keys, and no visit of primitives: this walk runs on every event
// that holds a tensor, and allocating a key list per object cost as much as the parse itself.
function revive(v: unknown, tensors: Uint8Array): unknown {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const item = v[i];
      if (typeof item === "object" && item !== null) v[i] = revive(item, tensors);
    }
    return v;
  }
  const record = v as Record<string, unknown>;
  let first = true;
  for (const key in record) {
    if (first) {
      first = false;
      // JSON.parse enumerates keys in document order (integer-like keys first), so a marker's
      // key is the first one.
      if (key.charCodeAt(0) === 36 && hasOneKey(record)) {
        return readMarker(key, record[key], tensors);
      }
    }
    const item = record[key];
    if (typeof item === "object" && item !== null) record[key] = revive(item, tensors);
  }
  return record;
}

/** Decodes what `encodeCanonical` produced back into plain values and typed arrays. */
export function decodeCanonical(json: string, tensors: Uint8Array = EMPTY): unknown {
  const parsed = JSON.parse(json);
  // Markers are the only `"$` sequences a canonical document can hold outside string values;
  // skipping the walk when none occurs makes decoding plain events a bare JSON.parse.
  return json.includes('"$') && typeof parsed === "object" && parsed !== null
    ? revive(parsed, tensors)
    : parsed;
}
