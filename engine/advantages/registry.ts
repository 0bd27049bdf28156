/**
 * The one list of advantage estimators, and the whole of their contract: the config schema's
 * `estimator.kind` enum, the `EstimatorName` type, `deno task train --help`, the reward scheme the
 * trainer runs, the workflow the config must use, and the README's estimator table (written by
 * `deno task docs`) derive from it. Adding an estimator is one file beside this one and one entry
 * below.
 *
 * @example
 * ```ts
 * import { estimateStep, type GroupTrajectory } from "./mod.ts";
 * declare const group0: readonly GroupTrajectory[];
 * declare const group1: readonly GroupTrajectory[];
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
  RewardScheme,
} from "./types.ts";

/** A step's groups (one per prompt, in prompt order) to their advantages, in the same order. */
export type StepEstimator = (
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions,
) => GroupAdvantages[];

/** One registered estimator: what it needs of a run, how it computes, and how it is documented. */
export interface EstimatorEntry {
  readonly scope: EstimatorScope;
  /** How the trainer turns a group's grades into the rewards this estimator reads. */
  readonly rewards: RewardScheme;
  /** The `workflow.kind` a config must use with it (its rewards read that workflow's roles); absent: any. */
  readonly workflow?: string;
  /** The advantage of an action: the README table's cell (Markdown, in the table's notation). */
  readonly formula: string;
  /** One line for `--help`. */
  readonly summary: string;
  /** Paper; reference code it follows: the README table's cell (Markdown). */
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
      rewards: "trajectory",
      formula: "(r - mu_k) / (sigma_k + eps)",
      summary: "agent-wise normalization (Dr. MAS); the default",
      source:
        "Feng et al. 2026 Sec. 4.2; `langfengQ/DrMAS` `core_algos.py` GRPO, `group_by_agent_id=True`",
      estimate: perGroup(drMasAdvantages),
    }),
    "grpo": Object.freeze({
      scope: "group",
      rewards: "trajectory",
      formula: "(S_i - mu) / (sigma + eps), every action of trajectory i",
      summary: "one global baseline per prompt group (GRPO)",
      source: "Shao et al. 2024; DrMAS `compute_grpo_outcome_advantage`, `group_by_agent_id=False`",
      estimate: perGroup(grpoAdvantages),
    }),
    "dr-grpo": Object.freeze({
      scope: "group",
      rewards: "trajectory",
      formula: 'S_i - mu (pair with `loss.aggregation: "seq-sum-const"`)',
      summary: "GRPO without the std; pair with loss.aggregation seq-sum-const (Dr. GRPO)",
      source: "Liu et al. 2025; DrMAS `norm_adv_by_std_in_grpo=False`",
      estimate: perGroup(drGrpoAdvantages),
    }),
    "rloo": Object.freeze({
      scope: "group",
      rewards: "trajectory",
      formula: "(r - m) n / (n - 1), m the mean of the trajectories' first-action r; n = 1: r",
      summary: "leave-one-out baseline (RLOO), as the Dr. MAS code centres each action",
      source: "Ahmadian et al. 2024; DrMAS `compute_rloo_outcome_advantage`",
      estimate: perGroup(rlooAdvantages),
    }),
    "rloo-trajectory": Object.freeze({
      scope: "group",
      rewards: "trajectory",
      formula: "S_i - mean over j != i of S_j (n = 1: 0)",
      summary: "RLOO on trajectory scores: a penalized action shares its trajectory's advantage",
      source: "Ahmadian et al. 2024; `rloo` before schema 3",
      estimate: perGroup(rlooTrajectoryAdvantages),
    }),
    "reinforce++": Object.freeze({
      scope: "batch",
      rewards: "trajectory",
      formula:
        "r - m (m as for `rloo`, 0 for a group of one), then whitened over the step's tokens",
      summary: "group-mean baseline, then one whitening over the whole batch (REINFORCE++)",
      source:
        "Hu 2025; DrMAS `compute_reinforce_plus_plus_baseline_outcome_advantage` + `masked_whiten`",
      estimate: reinforcePlusPlusAdvantages,
    }),
    "reinforce++-trajectory": Object.freeze({
      scope: "batch",
      rewards: "trajectory",
      formula: "S_i - mu_group, then whitened over every response token of the step",
      summary: "REINFORCE++ on trajectory scores: a penalized action shares its trajectory's value",
      source: "Hu 2025; `reinforce++` before schema 3",
      estimate: reinforcePlusPlusTrajectoryAdvantages,
    }),
    "mada": Object.freeze({
      scope: "role",
      rewards: "mada",
      workflow: "debate",
      formula: "generators (r - mu_k) / (sigma_k + eps) on r = 2 acc + len; critics r - 2 acc_G",
      summary: "MADA-RL: normalized generators, counterfactual critics (debate workflow)",
      source: "Pulici et al. 2026 Sec. 3",
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

/** The estimator a config without `estimator.kind` gets. */
export const DEFAULT_ESTIMATOR: EstimatorName = "dr-mas";

/**
 * The registry entry of `name`, as the general entry type (an entry without a `workflow` reads
 * as undefined there).
 *
 * @example
 * ```ts
 * import { estimatorEntry } from "./registry.ts";
 * estimatorEntry("mada").workflow; // "debate"
 * estimatorEntry("grpo").rewards; // "trajectory"
 * ```
 */
export function estimatorEntry(name: EstimatorName): EstimatorEntry {
  return ESTIMATOR_REGISTRY[name];
}

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
