/**
 * The one list of advantage estimators. The config schema's `estimator.kind` enum, the
 * `EstimatorName` type and `deno task train --help` derive from it; adding an estimator is one
 * file beside this one and one entry below.
 *
 * @example
 * ```ts
 * import { estimateStep } from "./registry.ts";
 * const perPrompt = estimateStep("reinforce++", [group0, group1], { sigma: "unbiased", eps: 1e-6 });
 * perPrompt[0].batch === perPrompt[1].batch; // one whitening over the whole step
 * ```
 */
import { drGrpoAdvantages } from "./dr-grpo.ts";
import { drMasAdvantages } from "./dr-mas.ts";
import { AdvantageInputError } from "./errors.ts";
import { grpoAdvantages } from "./grpo.ts";
import { madaAdvantages } from "./mada.ts";
import {
  reinforcePlusPlusAdvantages,
  reinforcePlusPlusTrajectoryAdvantages,
} from "./reinforce-pp.ts";
import { rlooAdvantages, rlooTrajectoryAdvantages } from "./rloo.ts";
import type {
  EstimatorOptions,
  EstimatorScope,
  GroupAdvantages,
  GroupTrajectory,
} from "./types.ts";

/** A step's groups (one per prompt, in prompt order) to their advantages, in the same order. */
export type StepEstimator = (
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions,
) => GroupAdvantages[];

/** One registered estimator. */
export interface EstimatorEntry {
  readonly scope: EstimatorScope;
  /** The formula, in the notation of the README's estimator table. */
  readonly formula: string;
  /** One line for `--help`. */
  readonly summary: string;
  /** Paper and reference code it follows. */
  readonly source: string;
  readonly estimate: StepEstimator;
}

type GroupEstimator = (g: readonly GroupTrajectory[], o: EstimatorOptions) => GroupAdvantages;

/** A group-scope estimator sees one prompt group at a time. */
function perGroup(estimate: GroupEstimator): StepEstimator {
  return (groups, options) => groups.map((g) => estimate(g, options));
}

/** Every estimator by its config name, in the order `--help` lists them. */
export const ESTIMATOR_REGISTRY = Object.freeze(
  {
    "dr-mas": Object.freeze({
      scope: "group",
      formula: "(r - mu_k) / (sigma_k + eps), mu_k, sigma_k over agent k's actions in the group",
      summary: "agent-wise normalization (Dr. MAS); the default",
      source: "Feng et al. 2026 Sec. 4.2; langfengQ/DrMAS core_algos.py, group_by_agent_id=True",
      estimate: perGroup(drMasAdvantages),
    }),
    "grpo": Object.freeze({
      scope: "group",
      formula: "(S_i - mu) / (sigma + eps), mu, sigma over the group's trajectory scores S",
      summary: "one global baseline per prompt group (GRPO)",
      source: "Shao et al. 2024; langfengQ/DrMAS core_algos.py compute_grpo_outcome_advantage",
      estimate: perGroup(grpoAdvantages),
    }),
    "dr-grpo": Object.freeze({
      scope: "group",
      formula: "S_i - mu, mu over the group's trajectory scores (no sigma)",
      summary: "GRPO without the std; pair with loss.aggregation seq-sum-const (Dr. GRPO)",
      source: "Liu et al. 2025; DrMAS core_algos.py norm_adv_by_std_in_grpo=False",
      estimate: perGroup(drGrpoAdvantages),
    }),
    "rloo": Object.freeze({
      scope: "group",
      formula: "(r - m) n / (n - 1), r the action's own score, m the mean first-action score",
      summary: "leave-one-out baseline (RLOO), as the Dr. MAS code centres each action",
      source: "Ahmadian et al. 2024; DrMAS core_algos.py compute_rloo_outcome_advantage",
      estimate: perGroup(rlooAdvantages),
    }),
    "rloo-trajectory": Object.freeze({
      scope: "group",
      formula: "S_i - mean_{j != i} S_j over the trajectories' scores",
      summary: "RLOO on trajectory scores: a penalized action shares its trajectory's advantage",
      source: "Ahmadian et al. 2024; this project's form before the code's became the default",
      estimate: perGroup(rlooTrajectoryAdvantages),
    }),
    "reinforce++": Object.freeze({
      scope: "batch",
      formula: "whiten(r - m) over every response token of the step, m as for rloo",
      summary: "group-mean baseline, then one whitening over the whole batch (REINFORCE++)",
      source: "Hu 2025; DrMAS core_algos.py compute_reinforce_plus_plus_baseline_outcome_advantage",
      estimate: reinforcePlusPlusAdvantages,
    }),
    "reinforce++-trajectory": Object.freeze({
      scope: "batch",
      formula: "whiten(S_i - mu_group) over every response token of the step",
      summary: "REINFORCE++ on trajectory scores: a penalized action shares its trajectory's value",
      source: "Hu 2025; this project's form before the code's became the default",
      estimate: reinforcePlusPlusTrajectoryAdvantages,
    }),
    "mada": Object.freeze({
      scope: "role",
      formula: "generators (r - mu_k) / (sigma_k + eps); critics r - 2 acc_G (unnormalized)",
      summary: "MADA-RL: normalized generators, counterfactual critics (debate workflow)",
      source: "Pulici et al. 2026 Sec. 3, Eq. 4-6",
      estimate: perGroup(madaAdvantages),
    }),
  } as const satisfies Record<string, EstimatorEntry>,
);

/** An estimator's config name. */
export type EstimatorName = keyof typeof ESTIMATOR_REGISTRY;

/** Every estimator name, for the config schema's enum. */
export const ESTIMATOR_NAMES = Object.freeze(
  Object.keys(ESTIMATOR_REGISTRY) as [EstimatorName, ...EstimatorName[]],
);

/**
 * Advantages of one training step: every prompt group of the step under the named estimator,
 * whatever its scope.
 */
export function estimateStep(
  name: string,
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions,
): GroupAdvantages[] {
  if (!Object.hasOwn(ESTIMATOR_REGISTRY, name)) {
    throw new AdvantageInputError("estimator", name, `one of ${ESTIMATOR_NAMES.join(", ")}`);
  }
  return ESTIMATOR_REGISTRY[name as EstimatorName].estimate(groups, options);
}
