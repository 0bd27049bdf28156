/** Weighted sums of named reward components, as the config's `rewards.weights` describes. */
import { RewardInputError } from "./errors.ts";

/**
 * `sum_c weights[c] * components[c]`. A component without a weight contributes nothing (tasks may
 * compute more components than a config uses); a weight naming a component that was not computed
 * is an error, since it is almost always a typo in the config.
 *
 * @example
 * ```ts
 * weightedReward({ accuracy: 1, format: -1 }, { accuracy: 1, format: 0.1 }); // 0.9
 * ```
 */
export function weightedReward(
  components: Readonly<Record<string, number>>,
  weights: Readonly<Record<string, number>>,
): number {
  let total = 0;
  // Sorted so the float sum does not depend on object key order.
  for (const name of Object.keys(weights).sort()) {
    const weight = weights[name];
    if (!Number.isFinite(weight)) {
      throw new RewardInputError(`weights.${name}`, weight, "a finite number");
    }
    if (!Object.hasOwn(components, name)) {
      const known = Object.keys(components).sort().join(", ") || "none";
      throw new RewardInputError(
        `weights.${name}`,
        weight,
        `a weight for a computed component (${known})`,
      );
    }
    const value = components[name];
    if (!Number.isFinite(value)) {
      throw new RewardInputError(`components.${name}`, value, "a finite number");
    }
    total += weight * value;
  }
  return total;
}
