import assert from "node:assert/strict";
import {
  CanonicalEncodingError,
  chainHash,
  decodeCanonical,
  encodeCanonical,
  eventId,
  GENESIS_HASH,
  sha256Hex,
} from "../../events/mod.ts";

Deno.test("canonical JSON sorts keys at every depth and has no whitespace", () => {
  const { json, tensors } = encodeCanonical({ b: 1, a: { d: [true, null], c: "x" }, é: 0.5 });
  assert.equal(json, '{"a":{"c":"x","d":[true,null]},"b":1,"é":0.5}');
  assert.equal(tensors.length, 0);
});

Deno.test("strings are quoted exactly as JSON.stringify quotes them", () => {
  const samples = [
    "",
    "plain",
    'q"uote',
    "back\\slash",
    "line\nbreak",
    "\u0001",
    "\u007f",
    "é",
    "\ud800",
    "x".repeat(65),
    "tab\t" + "y".repeat(80),
  ];
  for (const s of samples) {
    assert.equal(encodeCanonical({ s }).json, `{"s":${JSON.stringify(s)}}`);
    assert.equal(encodeCanonical({ [s || "k"]: 1 }).json, `{${JSON.stringify(s || "k")}:1}`);
  }
});

Deno.test("non-finite floats and -0 are spelled out and come back", () => {
  const value = { nan: NaN, inf: Infinity, ninf: -Infinity, nz: -0, z: 0, list: [NaN, 1.5] };
  const { json } = encodeCanonical(value);
  assert.equal(
    json,
    '{"inf":{"$f":"Infinity"},"list":[{"$f":"NaN"},1.5],"nan":{"$f":"NaN"},' +
      '"ninf":{"$f":"-Infinity"},"nz":{"$f":"-0"},"z":0}',
  );
  const back = decodeCanonical(json) as typeof value;
  assert.ok(Number.isNaN(back.nan) && Number.isNaN(back.list[0]));
  assert.equal(back.inf, Infinity);
  assert.equal(back.ninf, -Infinity);
  assert.ok(Object.is(back.nz, -0));
});

Deno.test("typed arrays are stored as little-endian bytes, 8-byte aligned", () => {
  const value = {
    ids: new Int32Array([1, -2, 258]),
    lp: new Float32Array([-0.5]),
    f64: new Float64Array([1]),
  };
  const { json, tensors } = encodeCanonical(value);
  // keys sorted: f64 (offset 0, 8 bytes), ids (offset 8, 12 bytes), lp (offset 24 after padding)
  assert.equal(json, '{"f64":{"$f64":[0,1]},"ids":{"$i32":[8,3]},"lp":{"$f32":[24,1]}}');
  assert.deepEqual([...tensors], [
    ...[0, 0, 0, 0, 0, 0, 0xf0, 0x3f], // 1.0 as float64 LE
    ...[1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 2, 1, 0, 0], // 1, -2, 258 as int32 LE
    ...[0, 0, 0, 0], // padding to 24
    ...[0, 0, 0, 0xbf], // -0.5 as float32 LE
  ]);
  const back = decodeCanonical(json, tensors) as typeof value;
  assert.deepEqual(back, value);
});

Deno.test("values that carry a timezone or cannot round-trip are rejected with their path", () => {
  const cases: [unknown, string][] = [
    [{ at: new Date(0) }, ".at"],
    [{ a: [1, 2n] }, ".a[1]"],
    [{ m: new Map() }, ".m"],
    [{ x: { $f: "NaN" } }, ".x.$f"],
    [{ u8: new Uint8Array(1) }, ".u8"],
  ];
  for (const [value, path] of cases) {
    assert.throws(
      () => encodeCanonical(value),
      (err: unknown) => err instanceof CanonicalEncodingError && err.path === path,
      `expected rejection at ${path}`,
    );
  }
});

Deno.test("chain hash is sha256(prev_hash || canonical envelope || tensors)", async () => {
  const { json, tensors } = encodeCanonical({ ids: new Int32Array([5]), step: 0 });
  const parts = {
    id: "00ff",
    stream: "run-1",
    version: 1,
    type: "t.x",
    schemaVersion: 1,
    data: json,
    tensors,
  };
  // Computed independently with WebCrypto over the bytes the design names.
  const envelope = new TextEncoder().encode(
    `{"data":${json},"id":"00ff","schemaVersion":1,"stream":"run-1","type":"t.x","version":1}`,
  );
  const input = new Uint8Array([...new Uint8Array(32), ...envelope, ...tensors]);
  const expected = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", input)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  assert.equal(chainHash(GENESIS_HASH, parts), expected);
  assert.notEqual(chainHash(expected, { ...parts, version: 2 }), expected);
});

Deno.test("event ids are a pure function of stream, type and coordinates", () => {
  const at = { step: 3, agent: "solver", prompt: 0, sample: 5, turn: 1 };
  const id = eventId("run-1", "turn.generated", at);
  assert.match(id, /^[0-9a-f]{32}$/);
  const key = encodeCanonical({ coordinates: at, stream: "run-1", type: "turn.generated" }).json;
  assert.equal(id, sha256Hex(key).slice(0, 32));
  assert.equal(
    eventId("run-1", "turn.generated", { turn: 1, sample: 5, prompt: 0, agent: "solver", step: 3 }),
    id,
  );
  assert.notEqual(eventId("run-1", "turn.generated", { ...at, sample: 6 }), id);
  assert.notEqual(eventId("run-2", "turn.generated", at), id);
  assert.notEqual(eventId("run-1", "reward.assigned", at), id);
});
