/**
 * Rotary-embedding inverse frequencies for a model config, including the position-independent
 * scalings (`linear`, `llama3`). `dynamic` (NTK, depends on the running sequence length) and `yarn`
 * (also rescales attention) are refused with an UnsupportedConfigError.
 */
import { UnsupportedConfigError } from "./errors.ts";
import type { ModelConfig } from "./model-config.ts";

/**
 * `inv_freq[i] = theta^(-2i/headDim)` for i < headDim/2, then scaled as the config says.
 * Computed in float64; the caller rounds to its compute dtype.
 * @example
 * ```ts
 * import type { ModelConfig } from "./model-config.ts";
 * import { ropeInverseFrequencies } from "./rope-frequencies.ts";
 *
 * declare const config: ModelConfig;
 * ropeInverseFrequencies(config)[0]; // 1
 * ```
 */
export function ropeInverseFrequencies(
  c: Pick<ModelConfig, "headDim" | "ropeTheta" | "ropeScaling">,
): Float64Array {
  const half = c.headDim / 2;
  const inv = new Float64Array(half);
  for (let i = 0; i < half; i++) inv[i] = 1 / Math.pow(c.ropeTheta, (2 * i) / c.headDim);
  const s = c.ropeScaling;
  if (s === null) return inv;
  switch (s.type) {
    case "linear":
      return inv.map((f) => f / s.factor);
    case "llama3": {
      // Long wavelengths (beyond the original context / lowFreqFactor) are slowed by `factor`,
      // short ones kept, and the band between interpolated smoothly.
      const lowWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
      const highWavelen = s.originalMaxPositionEmbeddings / s.highFreqFactor;
      return inv.map((f) => {
        const wavelen = (2 * Math.PI) / f;
        if (wavelen > lowWavelen) return f / s.factor;
        if (wavelen < highWavelen) return f;
        const smooth = (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) /
          (s.highFreqFactor - s.lowFreqFactor);
        return (1 - smooth) * (f / s.factor) + smooth * f;
      });
    }
    case "dynamic":
    case "yarn":
      throw new UnsupportedConfigError(
        "rope_scaling.rope_type",
        s.type,
        "only default, linear and llama3 rope scaling are implemented",
      );
  }
}
