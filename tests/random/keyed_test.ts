import assert from "node:assert/strict";
import {
  philox4x32,
  RandomArgumentError,
  randomStream,
  streamBlock,
  uniform24,
  uniform53,
} from "../../engine/random/mod.ts";

const base = { seed: 42, purpose: "sample-token", step: 3, agent: "solver", sample: 1 } as const;

Deno.test("stream derivation: SHA-256 of the versioned canonical JSON feeds Philox key and counter", async () => {
  // Recomputed here from the documented derivation with WebCrypto (not node:crypto), so a change
  // to the derivation, which would silently change every recorded run, fails this test.
  const canonical = JSON.stringify([
    "polyrl/random/v1",
    42,
    "sample-token",
    3,
    null,
    "solver",
    null,
    1,
    null,
  ]);
  const digest = new DataView(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical)),
  );
  const word = (i: number) => digest.getUint32(4 * i, false);
  const s = randomStream(base);
  assert.deepEqual(s.key, [word(0), word(1)]);
  assert.deepEqual(s.tail, [word(2), word(3)]);
  const want = philox4x32([9, 2, word(2), word(3)], [word(0), word(1)]);
  assert.deepEqual([...streamBlock(s, 9, 2, new Uint32Array(4))], want);
});

Deno.test("draws are a pure function of coordinates and index, not of call order", () => {
  const first = randomStream(base);
  const forward = [0, 1, 2, 3, 4].map((i) => uniform53(first, i));
  const second = randomStream({ ...base });
  const backward = [4, 3, 2, 1, 0].map((i) => uniform53(second, i)).reverse();
  assert.deepEqual(forward, backward);
  assert.equal(new Set(forward).size, 5);
});

Deno.test("every coordinate changes the stream; absent differs from 0 and '1' from 1", () => {
  const variants = [
    base,
    { ...base, seed: 43 },
    { ...base, purpose: "init" },
    { ...base, step: 4 },
    { ...base, wg: 0 },
    { ...base, wg: "0" },
    { ...base, agent: "verifier" },
    { ...base, prompt: 0 },
    { ...base, sample: 2 },
    { ...base, turn: 0 },
    { ...base, step: undefined },
  ];
  const keys = variants.map((c) => {
    const s = randomStream(c);
    return [...s.key, ...s.tail].join(",");
  });
  assert.equal(new Set(keys).size, variants.length);
});

Deno.test("uniform53 lies in [0,1) on the 2^-53 grid; uniform24 on the 2^-24 grid and float32-exact", () => {
  const s = randomStream(base);
  let sum = 0;
  const n = 20_000;
  for (let i = 0; i < n; i++) {
    const u = uniform53(s, i);
    assert.ok(u >= 0 && u < 1);
    assert.ok(Number.isInteger(u * 2 ** 53));
    const v = uniform24(s, i);
    assert.ok(v >= 0 && v < 1 && Math.fround(v) === v && Number.isInteger(v * 2 ** 24));
    sum += u;
  }
  // Mean of n uniforms has sd sqrt(1/12/n) = 0.002; 0.01 is five sd.
  assert.ok(Math.abs(sum / n - 0.5) < 0.01, `mean ${sum / n}`);
});

Deno.test("uniform53 and uniform24 read the documented words of block (index, lane 0)", () => {
  const s = randomStream(base);
  const w = streamBlock(s, 7, 0, new Uint32Array(4));
  // 53 bits: the top 27 bits of word 0 then the top 26 bits of word 1.
  assert.equal(uniform53(s, 7), ((w[0] >>> 5) * 2 ** 26 + (w[1] >>> 6)) / 2 ** 53);
  assert.equal(uniform24(s, 7), (w[0] >>> 8) / 2 ** 24);
});

Deno.test("bad coordinates and indices name the field, the value and what is allowed", () => {
  const cases: Array<[() => unknown, string]> = [
    [() => randomStream({ ...base, seed: -1 }), "seed"],
    [() => randomStream({ ...base, seed: 1.5 }), "seed"],
    [() => randomStream({ ...base, purpose: "" }), "purpose"],
    [() => randomStream({ ...base, step: 2 ** 53 }), "step"],
    [() => randomStream({ ...base, agent: -3 }), "agent"],
    [() => uniform53(randomStream(base), 2 ** 32), "index"],
    [() => streamBlock(randomStream(base), 0, -1, new Uint32Array(4)), "lane"],
  ];
  for (const [fn, field] of cases) {
    assert.throws(fn, (e) => {
      assert.ok(e instanceof RandomArgumentError);
      assert.equal(e.field, field);
      assert.match(e.message, new RegExp(`${field} = .* expected `));
      return true;
    });
  }
});
