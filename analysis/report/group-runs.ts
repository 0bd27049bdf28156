import { ReportError } from "./report-error.ts";
import type { RunSummary } from "./run-summary.ts";

/** Runs sharing one value of the grouping key (e.g. all seeds of estimator=drmas). */
export interface RunGroup {
  readonly kind: "run-group";
  readonly key: string;
  readonly value: string;
  readonly runs: readonly RunSummary[];
}

/**
 * Groups runs by one flattened config key, groups ordered by value. Every run must carry the
 * key; the error names the first that does not and the keys it has.
 *
 * @example
 * ```ts
 * import { groupRuns } from "./group-runs.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * groupRuns(runs, "estimator").map((g) => [g.value, g.runs.length]); // [["drmas", 5], ["grpo", 5]]
 * ```
 */
export function groupRuns(runs: readonly RunSummary[], key: string): RunGroup[] {
  if (runs.length === 0) throw new ReportError("no runs to report on");
  const groups = new Map<string, RunSummary[]>();
  for (const run of runs) {
    if (!(key in run.config)) {
      throw new ReportError(
        `run ${run.runId} has no config key ${key}; its keys: ${
          Object.keys(run.config).join(", ")
        }`,
      );
    }
    const value = String(run.config[key]);
    groups.set(value, [...(groups.get(value) ?? []), run]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    .map(([value, members]) => Object.freeze({ kind: "run-group", key, value, runs: members }));
}
