/** Metrics and statistics of the analysis layer; pure functions, no I/O. */
export { avgAtK, meanPassAtK, type ProblemTally } from "./avg-at-k.ts";
export { passAtK } from "./pass-at-k.ts";
export { mean, type SampleSummary, sampleVariance, summarize } from "./mean-sem.ts";
export { tCdfAt, tQuantileAt, twoSidedP } from "./student-t.ts";
export { noncentralTCdf } from "./noncentral-t.ts";
export {
  type Alternative,
  detectableNoncentrality,
  oneSampleMde,
  oneSamplePower,
  oneSampleSeeds,
  pooledMde,
  pooledPower,
  pooledSize,
  solveIncreasing,
  tTestPower,
  type TwoSampleDesign,
  welchDesign,
  welchMde,
  welchPower,
  welchSeeds,
} from "./t-test-power.ts";
export {
  type GroupSummary,
  welchFromSamples,
  welchFromSummary,
  type WelchResult,
} from "./welch.ts";
export { pairedFromSamples, type PairedResult } from "./paired-t.ts";
export { mcnemarExact, type McNemarResult } from "./mcnemar.ts";
export {
  criticImprovement,
  type CriticRoundEffect,
  type DebateAnswer,
  type DebateQuestion,
  majorityCorrect,
} from "./critic-improvement.ts";
export { quantile } from "./quantile.ts";
export { gradientSpikes, SPIKE_MULTIPLE } from "./gradient-spikes.ts";
export { type GradNormStability, gradNormStability } from "./grad-norm-stability.ts";
export { gainPerParameter } from "./cost.ts";
export { StatsInputError } from "./stats-input-error.ts";
