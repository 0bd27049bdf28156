import { gainPerParameter, mean } from "../stats/mod.ts";
import type { AccuracyCell } from "./accuracy-table.ts";
import type { RunGroup } from "./group-runs.ts";
import { AVERAGE, type RunSummary } from "./run-summary.ts";

/** Cost of one group: inference tokens and turns, trainable parameters, gain per parameter. */
export interface CostRow {
  readonly kind: "cost-row";
  readonly group: string;
  readonly tokensPerQuestion: number | null;
  readonly turnsPerTrajectory: number | null;
  readonly trainableParameters: number | null;
  /** (average accuracy - baseline's) / trainable parameters; null for the baseline or unknown. */
  readonly gainPerParameter: number | null;
}

function meanOf(runs: readonly RunSummary[], f: (r: RunSummary) => number | null): number | null {
  const xs = runs.map(f).filter((x): x is number => x !== null && Number.isFinite(x));
  return xs.length ? mean(xs) : null;
}

/**
 * Per group: mean tokens per question, turns per trajectory, trainable parameters, and the
 * average-accuracy gain over the baseline per trainable parameter.
 *
 * @example
 * ```ts
 * import type { AccuracyCell } from "./accuracy-table.ts";
 * import { costTable } from "./cost-table.ts";
 * import type { RunGroup } from "./group-runs.ts";
 * declare const groups: readonly RunGroup[];
 * declare const cells: readonly AccuracyCell[];
 *
 * costTable(groups, cells, "grpo").map((r) => [r.group, r.gainPerParameter]);
 * ```
 */
export function costTable(
  groups: readonly RunGroup[],
  cells: readonly AccuracyCell[],
  baseline: string,
): CostRow[] {
  const avg = (group: string) =>
    cells.find((c) => c.group === group && c.benchmark === AVERAGE)?.mean;
  const baseAcc = avg(baseline);
  return groups.map((g) => {
    const params = meanOf(g.runs, (r) => r.trainableParameters);
    const acc = avg(g.value);
    return Object.freeze({
      kind: "cost-row",
      group: g.value,
      tokensPerQuestion: meanOf(g.runs, (r) => r.tokensPerQuestion),
      turnsPerTrajectory: meanOf(g.runs, (r) => r.turnsPerTrajectory),
      trainableParameters: params,
      gainPerParameter: g.value === baseline || params === null || !params || acc === undefined ||
          baseAcc === undefined
        ? null
        : gainPerParameter(acc, baseAcc, params),
    });
  });
}
