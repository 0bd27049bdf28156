/** Estimators by the names a config uses (`estimator.kind`). */
import { drGrpoAdvantages } from "./dr-grpo.ts";
import { drMasAdvantages } from "./dr-mas.ts";
import { AdvantageInputError } from "./errors.ts";
import { grpoAdvantages } from "./grpo.ts";
import { reinforcePlusPlusAdvantages } from "./reinforce-pp.ts";
import { rlooAdvantages } from "./rloo.ts";
import type { EstimatorOptions, GroupAdvantages, GroupTrajectory } from "./types.ts";

/** Estimators that need only one group at a time. */
export const GROUP_ESTIMATORS = Object.freeze({
  "grpo": grpoAdvantages,
  "dr-mas": drMasAdvantages,
  "dr-grpo": drGrpoAdvantages,
  "rloo": rlooAdvantages,
});

/** Names accepted by {@link estimateBatch}. */
export type BatchEstimatorName = keyof typeof GROUP_ESTIMATORS | "reinforce++";

/**
 * Advantages for a step's batch of groups (one group per prompt) under the named estimator.
 * MADA-RL is role-specific (generators normalized, critics counterfactual) and lives in
 * engine/rewards (madaGeneratorAdvantages, madaCriticAdvantages).
 *
 * @example
 * ```ts
 * estimateBatch("dr-mas", [group0, group1], { sigma: "population", eps: 1e-6 });
 * ```
 */
export function estimateBatch(
  name: string,
  groups: readonly (readonly GroupTrajectory[])[],
  options: EstimatorOptions,
): GroupAdvantages[] {
  if (name === "reinforce++") return reinforcePlusPlusAdvantages(groups, options);
  if (Object.hasOwn(GROUP_ESTIMATORS, name)) {
    const estimate = GROUP_ESTIMATORS[name as keyof typeof GROUP_ESTIMATORS];
    return groups.map((g) => estimate(g, options));
  }
  const known = [...Object.keys(GROUP_ESTIMATORS), "reinforce++"].join(", ");
  const hint = name === "mada" ? " (mada: use madaGeneratorAdvantages / madaCriticAdvantages)" : "";
  throw new AdvantageInputError("estimator", name, `one of ${known}${hint}`);
}
