/** One side of a claim for claimPower in the study's tests. */
import type { PowerSide } from "../../study/claim-power.ts";

/** The evaluation the tests' per-seed values were observed on: 16 problems x 16 samples. */
export const SIXTEEN = Object.freeze({ problems: 16, samples: 16 });

/**
 * A cell's per-seed `values`, observed on SIXTEEN and planned at `planned`, with the seeds they
 * ran at where the test pairs them.
 *
 * @example
 * ```ts
 * import { powerSide } from "./power-side.ts";
 * powerSide("a", [0.3, 0.34, 0.29], { problems: 64, samples: 16 }, [0, 1, 2]);
 * ```
 */
export function powerSide(
  cell: string,
  values: number[],
  planned: { readonly problems: number; readonly samples: number } = SIXTEEN,
  seeds?: number[] | null,
): PowerSide {
  return { cell, values, observed: SIXTEEN, planned, ...(seeds === undefined ? {} : { seeds }) };
}
