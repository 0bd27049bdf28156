import type { GroupTrajectory } from "../../engine/advantages/mod.ts";

/**
 * A refine-style group of 4 with three agents active unevenly:
 *   s0 R=1: solver, verifier                                   (approved at once)
 *   s1 R=0: solver, verifier, refiner, verifier, refiner, verifier  (three loops, still wrong)
 *   s2 R=1: solver, verifier
 *   s3 R=1: solver, verifier, refiner, verifier
 *
 * Trajectory-weighted: rewards [1,0,1,1], mu = 3/4; population var = (3*(1/4)^2 + (3/4)^2)/4
 *   = (3/16 + 9/16)/4 = 3/16, sigma = sqrt(3)/4; unbiased var = (12/16)/3 = 1/4, sigma = 1/2.
 * solver  (4 actions) rewards [1,0,1,1]: the same as the trajectories.
 * verifier (7 actions) rewards [1, 0,0,0, 1, 1,1]: mu = 4/7; population var = 4/7 - 16/49 = 12/49,
 *   sigma = 2*sqrt(3)/7; unbiased var = (12/49)*(7/6) = 2/7.
 * refiner (3 actions) rewards [0,0,1]: mu = 1/3; population var = 1/3 - 1/9 = 2/9,
 *   sigma = sqrt(2)/3; unbiased var = (2/9)*(3/2) = 1/3.
 */
export const REFINE_GROUP: readonly GroupTrajectory[] = [
  { sample: 0, reward: 1, actions: [{ agent: "solver", turn: 0 }, { agent: "verifier", turn: 1 }] },
  {
    sample: 1,
    reward: 0,
    actions: [
      { agent: "solver", turn: 0 },
      { agent: "verifier", turn: 1 },
      { agent: "refiner", turn: 2 },
      { agent: "verifier", turn: 3 },
      { agent: "refiner", turn: 4 },
      { agent: "verifier", turn: 5 },
    ],
  },
  { sample: 2, reward: 1, actions: [{ agent: "solver", turn: 0 }, { agent: "verifier", turn: 1 }] },
  {
    sample: 3,
    reward: 1,
    actions: [
      { agent: "solver", turn: 0 },
      { agent: "verifier", turn: 1 },
      { agent: "refiner", turn: 2 },
      { agent: "verifier", turn: 3 },
    ],
  },
];

/** Asserts |actual - expected| <= tol with a readable message. */
export function assertClose(actual: number, expected: number, tol = 1e-12, what = ""): void {
  if (!(Math.abs(actual - expected) <= tol)) {
    throw new Error(`${what} expected ${expected}, got ${actual} (tol ${tol})`);
  }
}
