import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CorruptSafetensorsError,
  MissingFileError,
  UnsupportedDtypeError,
} from "../../adapters/hf/errors.ts";
import { openSafetensors } from "../../adapters/hf/safetensors-reader.ts";
import { encodeSafetensors, writeSafetensors } from "../../adapters/hf/safetensors-writer.ts";
import { namedTensor } from "../../adapters/hf/tensor.ts";

/** Builds a file by hand from a header object and raw data bytes (independent of the writer). */
function handBuilt(header: unknown, data: number[], headerLengthOverride?: number): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + data.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLengthOverride ?? json.length), true);
  out.set(json, 8);
  out.set(data, 8 + json.length);
  return out;
}

const HEADER = {
  a: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
  b: { dtype: "BF16", shape: [1, 2], data_offsets: [8, 12] },
};
// F32 1.5 = 0x3FC00000, -0.5 = 0xBF000000; BF16 1.0 = 0x3F80, 0.25 = 0x3E80 (all little-endian).
const DATA = [0, 0, 0xc0, 0x3f, 0, 0, 0, 0xbf, 0x80, 0x3f, 0x80, 0x3e];

async function tempFile(bytes: Uint8Array): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".safetensors" });
  await Deno.writeFile(path, bytes);
  return path;
}

async function openError(bytes: Uint8Array): Promise<Error> {
  const path = await tempFile(bytes);
  try {
    (await openSafetensors(path)).close();
  } catch (e) {
    return e as Error;
  } finally {
    await Deno.remove(path);
  }
  throw new Error("expected openSafetensors to throw");
}

Deno.test("reads a hand-built file: F32 and BF16 tensors with shapes", async () => {
  const path = await tempFile(handBuilt(HEADER, DATA));
  using file = await openSafetensors(path);
  assert.deepEqual(file.names(), ["a", "b"]);
  const a = await file.read("a");
  const b = await file.read("b");
  assert.deepEqual([a.dtype, a.shape, [...a.data]], ["F32", [2], [1.5, -0.5]]);
  assert.deepEqual([b.dtype, b.shape, [...b.data]], ["BF16", [1, 2], [1, 0.25]]);
  await Deno.remove(path);
});

Deno.test("writer lays out an aligned header, sorted tensors and format=pt", () => {
  const bytes = encodeSafetensors([
    namedTensor("z", [2], new Float32Array([1, -2]), "F16"),
    namedTensor("a", [1], new Float32Array([1.5])),
  ], { metadata: { note: "x" } });
  const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal(headerLength % 8, 0, "data must start 8-byte aligned");
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  assert.deepEqual(header.__metadata__, { note: "x", format: "pt" });
  assert.deepEqual(header.a, { dtype: "F32", shape: [1], data_offsets: [0, 4] });
  assert.deepEqual(header.z, { dtype: "F16", shape: [2], data_offsets: [4, 8] });
  // 1.5f = 0x3FC00000, then F16 1 = 0x3C00, -2 = 0xC000.
  assert.deepEqual([...bytes.subarray(8 + headerLength)], [0, 0, 0xc0, 0x3f, 0, 0x3c, 0, 0xc0]);
});

Deno.test("write then read round-trips every float dtype", async () => {
  const dir = await Deno.makeTempDir();
  const values = new Float32Array([0.1, -7.25, 3e4, 0]);
  for (const dtype of ["F32", "F16", "BF16"] as const) {
    const path = join(dir, `${dtype}.safetensors`);
    await writeSafetensors(path, [namedTensor("w", [2, 2], values)], { dtype });
    using file = await openSafetensors(path);
    const t = await file.read("w");
    assert.equal(t.dtype, dtype);
    assert.deepEqual(t.shape, [2, 2]);
    const tolerance = { F32: 0, F16: 2 ** -11, BF16: 2 ** -8 }[dtype];
    t.data.forEach((v, i) => {
      assert.ok(
        Math.abs(v - values[i]) <= tolerance * Math.abs(values[i]),
        `${dtype}[${i}] = ${v}`,
      );
    });
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("duplicate tensor names are refused by the writer", () => {
  const t = namedTensor("w", [1], new Float32Array([1]));
  assert.throws(() => encodeSafetensors([t, t]), /duplicate tensor name w/);
});

Deno.test("a missing file names the path and what was expected", async () => {
  const path = join(await Deno.makeTempDir(), "nope.safetensors");
  await assert.rejects(() => openSafetensors(path), (e: Error) => {
    assert.ok(e instanceof MissingFileError);
    assert.match(e.message, /nope\.safetensors: expected a safetensors checkpoint file/);
    return true;
  });
});

Deno.test("corrupt headers are reported with the reason", async () => {
  const cases: [Uint8Array, RegExp][] = [
    [new Uint8Array([1, 2, 3]), /fewer than the 8-byte prefix/],
    [handBuilt(HEADER, DATA, 200_000_000), /exceeds the 100000000-byte limit/],
    [handBuilt(HEADER, DATA, 10_000), /truncated: header length 10000 runs past the end/],
    [handBuilt(HEADER, DATA).map((b, i) => (i === 8 ? 0x5b : b)), /not valid UTF-8 JSON/],
    [handBuilt([1, 2], []), /header JSON is not an object/],
    [handBuilt(HEADER, DATA.slice(0, 10)), /truncated: tensor b ends at data byte 12 .* only 10/],
    [
      handBuilt({ a: { dtype: "F32", shape: [3], data_offsets: [0, 8] } }, DATA),
      /entry a: data_offsets \[0, 8\] span 8 bytes but F32 shape \[3\] needs 12/,
    ],
    [
      handBuilt({ a: { dtype: "F4", shape: [1], data_offsets: [0, 1] } }, DATA),
      /entry a has unknown dtype F4/,
    ],
    [
      handBuilt({
        a: { dtype: "F32", shape: [2], data_offsets: [0, 8] },
        b: { dtype: "F32", shape: [1], data_offsets: [4, 8] },
      }, DATA),
      /tensors a and b overlap at data byte 4/,
    ],
    [handBuilt({ a: { dtype: "F32", shape: [-1], data_offsets: [0, 4] } }, DATA), /invalid shape/],
    [handBuilt({ __metadata__: { format: 1 } }, []), /__metadata__\.format is not a string/],
  ];
  for (const [bytes, pattern] of cases) {
    const e = await openError(bytes);
    assert.ok(e instanceof CorruptSafetensorsError, `${pattern}: got ${e}`);
    assert.match(e.message, pattern);
  }
});

Deno.test("a non-float tensor fails on read with its name; others still read", async () => {
  const header = {
    ids: { dtype: "I64", shape: [1], data_offsets: [0, 8] },
    w: { dtype: "F32", shape: [1], data_offsets: [8, 12] },
  };
  const path = await tempFile(handBuilt(header, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f]));
  using file = await openSafetensors(path);
  await assert.rejects(() => file.read("ids"), (e: Error) => {
    assert.ok(e instanceof UnsupportedDtypeError);
    assert.equal(e.message, "tensor ids has dtype I64; supported dtypes: F32, F16, BF16");
    return true;
  });
  assert.deepEqual([...(await file.read("w")).data], [1]);
  await Deno.remove(path);
});

Deno.test("tensors are read from their byte range on demand, not at open", async () => {
  const path = await tempFile(handBuilt(HEADER, DATA));
  using file = await openSafetensors(path);
  // Rewrite tensor b's bytes after opening: the read must see the new bytes (BF16 0x4000 = 2.0),
  // which shows open() read the header only and read() fetches just that range.
  {
    using raw = await Deno.open(path, { write: true });
    await raw.seek(file.header.entries.get("b")!.start, Deno.SeekMode.Start);
    await raw.write(new Uint8Array([0x00, 0x40]));
  }
  assert.deepEqual([...(await file.read("b")).data], [2, 0.25]);
  assert.deepEqual([...(await file.read("a")).data], [1.5, -0.5]);
  await Deno.remove(path);
});
