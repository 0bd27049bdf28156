/**
 * The replay spot-check: one completed run per cell (its lowest seed) is re-executed with
 * `deno task replay` and must regenerate every logged event identically. A run whose current
 * record still matches its stream head is not replayed again.
 */
import { openStore } from "../events/mod.ts";
import { runScript } from "./child-task.ts";
import { formatDuration } from "./format-duration.ts";
import type { PlannedRun } from "./plan-runs.ts";
import type { ReplayRecord } from "./replay-records.ts";
import { runStates } from "./run-state.ts";
import { runPool } from "./task-pool.ts";

const REPLAY = new URL("../engine/cli/replay.ts", import.meta.url);

/** How to check. */
export interface ReplayCheckOptions {
  readonly store: string;
  readonly jobs: number;
  /** Records of earlier checks; a current one is kept instead of replaying. */
  readonly previous: readonly ReplayRecord[];
  readonly signal?: AbortSignal;
  readonly log: (line: string) => void;
}

/** The run of each cell that the spot-check replays: the lowest seed among its completed runs. */
function spotCheckRuns(
  plan: readonly PlannedRun[],
  complete: ReadonlySet<string>,
): PlannedRun[] {
  const chosen = new Map<string, PlannedRun>();
  for (const run of plan) {
    if (run.kind === "start") continue;
    const current = chosen.get(run.cell.id);
    if (complete.has(run.runId) && (!current || run.seed < current.seed)) {
      chosen.set(run.cell.id, run);
    }
  }
  return [...chosen.values()];
}

interface ReplayJson {
  ok: boolean;
  mode: "exact" | "tolerance";
  compared: number;
  identical: number;
  identicalThrough: number | null;
  firstDivergence: { type: string; step: number | null; reason: string } | null;
  backend: { current: string };
}

/**
 * Replays the spot-check run of every cell of `plan` that has one; returns the records of all
 * checked cells (kept and new), in cell order.
 *
 * @example
 * ```ts
 * import { loadGrid, planRuns } from "./mod.ts";
 * const store = ".polyrl/study.sqlite";
 * const grid = await loadGrid("study/grid.json");
 * const plan = await planRuns(grid.cells, { seeds: 5, store });
 * const records = await replaySpotChecks(plan, { store, jobs: 2, previous: [], log: console.error });
 * records.every((r) => r.ok);
 * ```
 */
export async function replaySpotChecks(
  plan: readonly PlannedRun[],
  options: ReplayCheckOptions,
): Promise<ReplayRecord[]> {
  const states = await (async () => {
    await using store = await openStore(options.store, { readOnly: true });
    return await runStates(store, plan.map((r) => r.runId));
  })();
  const complete = new Set(
    [...states].filter(([, s]) => s.kind === "complete").map(([id]) => id),
  );
  const chosen = spotCheckRuns(plan, complete);
  const headOf = (runId: string) => {
    const s = states.get(runId);
    if (s?.kind !== "complete") throw new Error(`run ${runId} is not complete`);
    return s.head;
  };
  const kept = chosen.flatMap((run) => {
    const head = headOf(run.runId);
    return options.previous.filter((r) =>
      r.runId === run.runId && r.ok && r.version === head.version && r.headHash === head.hash
    );
  });
  const todo = chosen.filter((run) => !kept.some((r) => r.runId === run.runId));
  options.log(
    `replay: ${chosen.length} spot-checks; ${kept.length} current from an earlier check, ` +
      `${todo.length} to replay`,
  );
  const fresh = await runPool(todo, options.jobs, async (run, i): Promise<ReplayRecord> => {
    const tag = `[replay ${i + 1}/${todo.length}] ${run.cell.id} seed ${run.seed}`;
    options.log(`${tag}: replaying run ${run.runId}`);
    const head = headOf(run.runId);
    const t0 = performance.now();
    const child = await runScript(
      REPLAY,
      [run.runId, "--store", options.store, "--format", "json"],
      { onLine: (line) => options.log(`  [replay ${run.cell.id} s${run.seed}] ${line}`) },
    );
    const seconds = (performance.now() - t0) / 1000;
    const base = { cell: run.cell.id, runId: run.runId, version: head.version, seconds };
    let report: ReplayJson | null = null;
    if (child.code === 0 || child.code === 1) {
      try {
        report = JSON.parse(child.stdout) as ReplayJson;
      } catch {
        report = null;
      }
    }
    if (report === null) {
      options.log(`${tag}: ERROR (exit ${child.code}) in ${formatDuration(seconds)}`);
      return {
        ...base,
        headHash: head.hash,
        ok: false,
        mode: null,
        compared: 0,
        identical: 0,
        identicalThrough: null,
        firstDivergence: null,
        backend: null,
        error: child.stderrTail.join("\n") || `exit ${child.code}`,
      };
    }
    options.log(
      `${tag}: ${report.ok ? `identical, ${report.compared} events` : "DIVERGED"} in ${
        formatDuration(seconds)
      }`,
    );
    return {
      ...base,
      headHash: head.hash,
      ok: report.ok,
      mode: report.mode,
      compared: report.compared,
      identical: report.identical,
      identicalThrough: report.identicalThrough,
      firstDivergence: report.firstDivergence
        ? {
          type: report.firstDivergence.type,
          step: report.firstDivergence.step,
          reason: report.firstDivergence.reason,
        }
        : null,
      backend: report.backend.current,
      error: null,
    };
  }, options.signal);
  const records = [...kept, ...fresh.filter((r): r is ReplayRecord => r !== undefined)];
  const order = chosen.map((r) => r.cell.id);
  return records.sort((a, b) => order.indexOf(a.cell) - order.indexOf(b.cell));
}
