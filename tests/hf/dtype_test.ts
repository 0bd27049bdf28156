import assert from "node:assert/strict";
import { decodeFloats, encodeFloats, roundToDtype } from "../../adapters/hf/dtype.ts";

/** Little-endian bytes of 16-bit patterns. */
const halves = (...bits: number[]) => new Uint8Array(new Uint16Array(bits).buffer);

Deno.test("BF16 bit patterns decode to their hand-computed values", () => {
  // 0x3F80 = 1.0, 0xC000 = -2.0, 0x3E80 = 2^-2, 0x7F80 = +inf, 0x0000 = 0
  const out = decodeFloats(halves(0x3f80, 0xc000, 0x3e80, 0x7f80, 0x0000), "BF16");
  assert.deepEqual([...out], [1, -2, 0.25, Infinity, 0]);
});

Deno.test("F16 bit patterns decode to their hand-computed values", () => {
  // 0x3C00 = 1, 0xC000 = -2, 0x7BFF = 65504 (max), 0x0001 = 2^-24 (min subnormal),
  // 0x3555 = 1/3 rounded = 0.333251953125, 0x7C00 = +inf
  const out = decodeFloats(halves(0x3c00, 0xc000, 0x7bff, 0x0001, 0x3555, 0x7c00), "F16");
  assert.deepEqual([...out], [1, -2, 65504, 2 ** -24, 0.333251953125, Infinity]);
});

Deno.test("F32 decodes from an unaligned slice", () => {
  const buf = new Uint8Array(9);
  new DataView(buf.buffer).setFloat32(1, 1.5, true);
  new DataView(buf.buffer).setFloat32(5, -0.5, true);
  assert.deepEqual([...decodeFloats(buf.subarray(1), "F32")], [1.5, -0.5]);
});

Deno.test("BF16 encoding rounds to nearest, ties to even", () => {
  const values = new Float32Array([
    1 + 2 ** -8, // exact tie between 0x3F80 and 0x3F81: keep the even 0x3F80
    1 + 3 * 2 ** -8, // tie between 0x3F81 and 0x3F82: go to the even 0x3F82
    1 + 2 ** -8 + 2 ** -20, // just above the tie: 0x3F81
    -1,
    NaN,
  ]);
  const bits = [...new Uint16Array(encodeFloats(values, "BF16").buffer)];
  assert.deepEqual(bits.slice(0, 4), [0x3f80, 0x3f82, 0x3f81, 0xbf80]);
  assert.ok(Number.isNaN(decodeFloats(halves(bits[4]), "BF16")[0]), "NaN must stay NaN");
});

Deno.test("F16 encoding rounds to nearest even and overflows to infinity", () => {
  const values = new Float32Array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 65520, 1e-8]);
  const bits = [...new Uint16Array(encodeFloats(values, "F16").buffer)];
  // 1+2^-11 ties down to 1.0; 1+3*2^-11 ties up to 1+2^-9 (0x3C02); 65520 rounds past max to inf;
  // 1e-8 is below half the smallest subnormal and flushes to 0.
  assert.deepEqual(bits, [0x3c00, 0x3c02, 0x7c00, 0x0000]);
});

Deno.test("roundToDtype is idempotent and exact for F32", () => {
  const values = new Float32Array([0.1, -3.7, 1234.5678]);
  assert.deepEqual(roundToDtype(values, "F32"), values);
  for (const dtype of ["F16", "BF16"] as const) {
    const once = roundToDtype(values, dtype);
    assert.deepEqual(roundToDtype(once, dtype), once);
    assert.notDeepEqual(once, values, `${dtype} should lose precision on 0.1`);
  }
});
