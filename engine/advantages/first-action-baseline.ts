/**
 * The group baseline of the Dr. MAS code's RLOO and REINFORCE++-baseline: one score per
 * trajectory, its FIRST action's reward (the code keeps the first row of each trajectory it meets,
 * `seen_pairs` in `core_algos.py` lines 662-667 and 706-711 at langfengQ/DrMAS 19c632b), their mean,
 * and 0 for a group of one (lines 668-673, 712-717).
 */
import type { GroupTrajectory } from "./types.ts";

/** The first-action scores and their mean as the code takes them. */
export interface FirstActionBaseline {
  /** One per trajectory that took an action, in group order. */
  readonly scores: readonly number[];
  /** Their mean; 0 when there is one (the code's convention for a group of one). */
  readonly mean: number;
}

/**
 * @example
 * ```ts
 * firstActionBaseline([
 *   { sample: 0, reward: 1, actions: [{ agent: "a", turn: 0, reward: 0.9 }, { agent: "b", turn: 1 }] },
 *   { sample: 1, reward: 0, actions: [{ agent: "a", turn: 0 }] },
 * ]); // { scores: [0.9, 0], mean: 0.45 }
 * ```
 */
export function firstActionBaseline(
  trajectories: readonly GroupTrajectory[],
): FirstActionBaseline {
  const scores = trajectories.filter((t) => t.actions.length > 0)
    .map((t) => t.actions[0].reward ?? t.reward);
  if (scores.length <= 1) return Object.freeze({ scores, mean: 0 });
  if (scores.every((s) => s === scores[0])) return Object.freeze({ scores, mean: scores[0] });
  let sum = 0;
  for (const s of scores) sum += s;
  return Object.freeze({ scores, mean: sum / scores.length });
}
