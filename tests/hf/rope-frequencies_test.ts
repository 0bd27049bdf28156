import assert from "node:assert/strict";
import { UnsupportedConfigError } from "../../adapters/hf/errors.ts";
import type { RopeScaling } from "../../adapters/hf/model-config.ts";
import { ropeInverseFrequencies } from "../../adapters/hf/rope-frequencies.ts";

const close = (a: number, b: number) => Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
const inv = (ropeTheta: number, ropeScaling: RopeScaling | null, headDim = 4) => [
  ...ropeInverseFrequencies({ headDim, ropeTheta, ropeScaling }),
];

Deno.test("default rope: theta^(-2i/d)", () => {
  // d = 4, theta = 10000: [10000^0, 10000^-0.5] = [1, 0.01]
  const f = inv(10000, null);
  assert.ok(close(f[0], 1) && close(f[1], 0.01), `${f}`);
});

Deno.test("linear scaling divides every frequency by the factor", () => {
  const f = inv(10000, { type: "linear", factor: 2 });
  assert.ok(close(f[0], 0.5) && close(f[1], 0.005), `${f}`);
});

Deno.test("llama3 scaling: long wavelengths slowed, short kept, band interpolated", () => {
  const s: RopeScaling = {
    type: "llama3",
    factor: 8,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 8192,
  };
  // Band edges: wavelengths above 8192/1 are slowed by 8, below 8192/4 = 2048 are kept.
  // theta = 1e8: f1 = 1e-4, wavelength 2*pi*1e4 ~ 62832 > 8192 -> 1e-4 / 8; f0 = 1 is kept.
  const far = inv(1e8, s);
  assert.ok(close(far[0], 1) && close(far[1], 1e-4 / 8), `${far}`);
  // Choose theta so f1 has wavelength 4096: smooth = (8192/4096 - 1) / (4 - 1) = 1/3,
  // result = (2/3) * f/8 + (1/3) * f = f * 5/12.
  const f1 = (2 * Math.PI) / 4096;
  const mid = inv(1 / (f1 * f1), s);
  assert.ok(close(mid[1], (f1 * 5) / 12), `${mid[1]} vs ${(f1 * 5) / 12}`);
});

Deno.test("dynamic and yarn scalings are recorded but refused here", () => {
  for (
    const ropeScaling of [
      { type: "dynamic", factor: 2 } as const,
      { type: "yarn", factor: 4, originalMaxPositionEmbeddings: 32768, raw: {} } as const,
    ]
  ) {
    assert.throws(() => inv(10000, ropeScaling), UnsupportedConfigError);
  }
});
