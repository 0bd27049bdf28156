/**
 * Floating-point storage dtypes of safetensors and their conversion to/from float32.
 * Safetensors stores little-endian bytes; the typed-array views below assume a little-endian host,
 * which `assertLittleEndianHost` checks once.
 */

/** Dtypes this adapter converts to and from Float32Array. */
export type FloatDtype = "F32" | "F16" | "BF16";

/** The float dtypes in the order error messages list them. */
export const FLOAT_DTYPES: readonly FloatDtype[] = Object.freeze(["F32", "F16", "BF16"]);

/** Bytes per element of every dtype the safetensors format defines (used to validate headers). */
export const SAFETENSORS_DTYPE_BYTES: Readonly<Record<string, number>> = Object.freeze({
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  I64: 8,
  U64: 8,
  F64: 8,
});

/** True when `dtype` is one of F32, F16, BF16. */
export function isFloatDtype(dtype: string): dtype is FloatDtype {
  return (FLOAT_DTYPES as readonly string[]).includes(dtype);
}

/** Throws on a big-endian host, where the typed-array views would misread safetensors bytes. */
export function assertLittleEndianHost(): void {
  if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
    throw new Error("safetensors I/O here assumes a little-endian host");
  }
}

/**
 * Decodes little-endian `bytes` of `dtype` into float32 values.
 * @example
 * ```ts
 * import { decodeFloats } from "./dtype.ts";
 *
 * decodeFloats(new Uint8Array([0x80, 0x3f]), "BF16"); // Float32Array [1]
 * ```
 */
export function decodeFloats(bytes: Uint8Array, dtype: FloatDtype): Float32Array {
  // Copy into a fresh, aligned buffer: the source may sit at an odd offset of a larger buffer.
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  const buffer = aligned.buffer as ArrayBuffer;
  switch (dtype) {
    case "F32":
      return new Float32Array(buffer, aligned.byteOffset, aligned.byteLength / 4).slice();
    case "F16":
      return Float32Array.from(
        new Float16Array(buffer, aligned.byteOffset, aligned.byteLength / 2),
      );
    case "BF16": {
      const half = new Uint16Array(buffer, aligned.byteOffset, aligned.byteLength / 2);
      const out = new Float32Array(half.length);
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < half.length; i++) bits[i] = half[i] << 16;
      return out;
    }
  }
}

/**
 * Encodes float32 values as little-endian bytes of `dtype`, rounding to nearest-even.
 * @example
 * ```ts
 * import { encodeFloats } from "./dtype.ts";
 *
 * encodeFloats(new Float32Array([1]), "F16"); // Uint8Array [0x00, 0x3c]
 * ```
 */
export function encodeFloats(values: Float32Array, dtype: FloatDtype): Uint8Array {
  switch (dtype) {
    case "F32":
      return new Uint8Array(values.slice().buffer);
    case "F16":
      return new Uint8Array(Float16Array.from(values).buffer);
    case "BF16": {
      const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
      const out = new Uint16Array(values.length);
      for (let i = 0; i < bits.length; i++) out[i] = float32BitsToBfloat16(bits[i]);
      return new Uint8Array(out.buffer);
    }
  }
}

/** Round-to-nearest-even truncation of float32 bits to bfloat16 bits; NaN stays a quiet NaN. */
function float32BitsToBfloat16(bits: number): number {
  if ((bits & 0x7fffffff) > 0x7f800000) return ((bits >>> 16) | 0x0040) & 0xffff;
  const roundingBias = 0x7fff + ((bits >>> 16) & 1);
  return ((bits + roundingBias) >>> 16) & 0xffff;
}

/** Rounds float32 values to what `dtype` can hold (the values a save/load round trip returns). */
export function roundToDtype(values: Float32Array, dtype: FloatDtype): Float32Array {
  return decodeFloats(encodeFloats(values, dtype), dtype);
}
