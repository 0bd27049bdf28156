/**
 * The runs a study consists of: every selected cell for seeds 0 .. seeds-1, with `--steps` and
 * `--device` applied, each under a run id derived from the cell, the seed and the config's hash.
 * The id is a pure function of what the run computes, so a study that is started again finds its
 * finished runs in the store, and a changed config (or `--steps`) gets new runs, never old ones.
 */
import { hashConfig } from "../events/mod.ts";
import { loadConfig, type NormalizedConfig } from "../engine/config/mod.ts";
import type { GridCell } from "./load-grid.ts";

/** How the grid's cells are run. */
export interface PlanOptions {
  readonly seeds: number;
  /** Overrides every cell's `steps`. */
  readonly steps?: number;
  /** Overrides every cell's `runtime.device`. */
  readonly device?: string;
  /** The store the runs go to (recorded in each config, as `deno task train --store` does). */
  readonly store: string;
}

/** One run of the study. */
export interface PlannedRun {
  readonly cell: GridCell;
  readonly seed: number;
  readonly runId: string;
  /** The config the run is started with (what `deno task train` loads from the same flags). */
  readonly config: NormalizedConfig;
}

/**
 * The run id of a config: `<cell>-s<seed>-<first 8 hex of the config hash>`, the hash taken
 * without the `store` key so that the same run is found through another spelling of the path.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../engine/config/mod.ts";
 * declare const config: NormalizedConfig;
 * runIdFor("refine-grpo", config); // "refine-grpo-s0-3f2a9c1d"
 * ```
 */
export function runIdFor(cell: string, config: NormalizedConfig): string {
  const { store: _store, ...identity } = config;
  return `${cell}-s${config.seed}-${hashConfig(identity).slice(0, 8)}`;
}

/**
 * The runs of `cells`, seed-major (every cell's seed 0 first), so that the first seed of each
 * cell, which the replay spot-check uses, is done early.
 *
 * @example
 * ```ts
 * import { loadGrid } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * const plan = await planRuns(grid.cells, { seeds: 5, store: ".polyrl/study.sqlite" });
 * ```
 */
export async function planRuns(
  cells: readonly GridCell[],
  options: PlanOptions,
): Promise<PlannedRun[]> {
  const runs: PlannedRun[] = [];
  for (let seed = 0; seed < options.seeds; seed++) {
    for (const cell of cells) {
      const config = await loadConfig({
        file: cell.configPath,
        overrides: {
          seed,
          store: options.store,
          ...(options.steps === undefined ? {} : { steps: options.steps }),
          ...(options.device === undefined ? {} : { runtime: { device: options.device } }),
        },
      });
      runs.push(Object.freeze({ cell, seed, runId: runIdFor(cell.id, config), config }));
    }
  }
  return runs;
}
