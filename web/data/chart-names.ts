/** The charts of the Run page, shared by the server query and the live updates. */
export const CHARTS = Object.freeze({
  reward: "reward",
  accuracy: "accuracy",
  evalAccuracy: "eval-accuracy",
  gradWg: "grad-wg",
  gradAgent: "grad-agent",
  baselineMu: "baseline-mu",
  baselineSigma: "baseline-sigma",
  lemma: "lemma",
  offPolicy: "off-policy",
});

/** Label of the global baseline next to the per-agent ones. */
export const GLOBAL = "global";

/**
 * Label of one of a worker group's off-policy diagnostics (gradient_step.applied): the largest
 * ratio, or the share of loss tokens dual-clipped or KL-clamped.
 */
export const offPolicyLabel = (wg: string, what: "max ratio" | "dual-clipped" | "KL-clamped") =>
  `${wg} ${what}`;

/** Label of a worker group's (or agent's) spike and non-finite markers. */
export const markerLabel = (name: string, marker: "spike" | "non-finite") => `${name} ${marker}`;
