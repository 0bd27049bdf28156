/**
 * The runs a study consists of: every selected cell for seeds 0 .. seeds-1, with `--steps` and
 * `--device` applied, each under a run id derived from the cell, the seed and the config's hash;
 * and the start runs the cells declare (grid `start`): a cell's config run for 0 steps at seed 0,
 * which evaluates its initial team once. The id is a pure function of what the run computes, so a
 * study that is started again finds its finished runs in the store, and a changed config (or
 * `--steps`) gets new runs, never old ones.
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
  /** A training run of a cell, or a start run (0 steps: the initial team evaluated once). */
  readonly kind: "train" | "start";
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

/** A start run: `cell`'s config for 0 steps at seed 0, whose accuracy `cells` share. */
export interface PlannedStart extends PlannedRun {
  readonly kind: "start";
  /** The cells whose start this run measures: `cell` and every cell that names it. */
  readonly cells: readonly string[];
}

/**
 * The run id of a start run's config: `<cell>-start-<first 8 hex of the config hash>`, the hash
 * taken without the `store` key as in {@link runIdFor}.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../engine/config/mod.ts";
 * declare const config: NormalizedConfig;
 * startRunIdFor("refine-grpo", config); // "refine-grpo-start-5b01e7c2"
 * ```
 */
export function startRunIdFor(cell: string, config: NormalizedConfig): string {
  const { store: _store, ...identity } = config;
  return `${cell}-start-${hashConfig(identity).slice(0, 8)}`;
}

/** What a run label in progress lines says: the cell and the seed, or the cell's start run. */
export function runLabel(run: Pick<PlannedRun, "kind" | "cell" | "seed">): string {
  return run.kind === "start" ? `${run.cell.id} start` : `${run.cell.id} seed ${run.seed}`;
}

/** The config a cell's run is started with: the cell's file with the study's overrides. */
function plannedConfig(
  cell: GridCell,
  seed: number,
  steps: number | undefined,
  options: Pick<PlanOptions, "device" | "store">,
): Promise<NormalizedConfig> {
  return loadConfig({
    file: cell.configPath,
    overrides: {
      seed,
      store: options.store,
      ...(steps === undefined ? {} : { steps }),
      ...(options.device === undefined ? {} : { runtime: { device: options.device } }),
    },
  });
}

/**
 * The start runs of `cells`: one per cell that names itself as its `start`, with the cells that
 * share it (among `cells`), in grid order; `--device` applies, `--seeds` and `--steps` do not
 * (seed 0, 0 steps).
 *
 * @example
 * ```ts
 * import { loadGrid } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * const starts = await planStarts(grid.cells, { store: ".polyrl/study.sqlite" });
 * starts.map((s) => [s.runId, s.cells]);
 * ```
 */
export async function planStarts(
  cells: readonly GridCell[],
  options: Pick<PlanOptions, "device" | "store">,
): Promise<PlannedStart[]> {
  const starts: PlannedStart[] = [];
  for (const cell of cells.filter((c) => c.start === c.id)) {
    const config = await plannedConfig(cell, 0, 0, options);
    starts.push(Object.freeze({
      kind: "start",
      cell,
      seed: 0,
      runId: startRunIdFor(cell.id, config),
      config,
      cells: cells.filter((c) => c.start === cell.id).map((c) => c.id),
    }));
  }
  return starts;
}

/**
 * The start runs the cells `selected` need (each selected cell's `start`), in plan order.
 *
 * @example
 * ```ts
 * import { loadGrid, selectCells } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * const starts = await planStarts(grid.cells, { store: ".polyrl/study.sqlite" });
 * startsOf(starts, selectCells(grid, "refine-drmas")).map((s) => s.cell.id); // ["refine-grpo"]
 * ```
 */
export function startsOf(
  starts: readonly PlannedStart[],
  selected: readonly GridCell[],
): PlannedStart[] {
  return starts.filter((s) => selected.some((c) => s.cells.includes(c.id)));
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
      const config = await plannedConfig(cell, seed, options.steps, options);
      runs.push(
        Object.freeze({ kind: "train", cell, seed, runId: runIdFor(cell.id, config), config }),
      );
    }
  }
  return runs;
}
