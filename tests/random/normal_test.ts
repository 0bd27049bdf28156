import assert from "node:assert/strict";
import { fillNormal, normal, randomStream, streamBlock } from "../../engine/random/mod.ts";

const s = randomStream({ seed: 3, purpose: "init:layer0.wq", wg: "policy" });

Deno.test("normal is Box-Muller over block floor(i/2): cos for even i, sin for odd i", () => {
  const w = streamBlock(s, 4, 0, new Uint32Array(4));
  const u = (hi: number, lo: number) => ((hi >>> 5) * 2 ** 26 + (lo >>> 6)) / 2 ** 53;
  const r = Math.sqrt(-2 * Math.log(1 - u(w[0], w[1])));
  const theta = 2 * Math.PI * u(w[2], w[3]);
  assert.equal(normal(s, 8), r * Math.cos(theta));
  assert.equal(normal(s, 9), r * Math.sin(theta));
});

Deno.test("fillNormal equals per-index normal, also from an odd offset", () => {
  const out = fillNormal(s, new Float64Array(7), { mean: 1, std: 0.5, offset: 3 });
  out.forEach((x, i) => assert.equal(x, 1 + 0.5 * normal(s, 3 + i)));
});

Deno.test("normal draws have mean 0 and variance 1 (20000 draws)", () => {
  const xs = fillNormal(s, new Float64Array(20_000));
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length;
  // sd of the mean is 1/sqrt(20000) = 0.0071; of the variance sqrt(2/20000) = 0.01.
  assert.ok(Math.abs(mean) < 0.035, `mean ${mean}`);
  assert.ok(Math.abs(variance - 1) < 0.05, `variance ${variance}`);
  assert.ok(xs.every(Number.isFinite));
});
