/**
 * Reads and validates a study grid: the file's schema, the cross-references between cells,
 * comparisons and claims, and every cell's experiment config (loaded exactly as
 * `deno task train --config` would load it).
 */
import { dirname, resolve } from "node:path";
import {
  ConfigError,
  type ConfigIssue,
  formatIssue,
  issuesFromZod,
  loadConfig,
  type NormalizedConfig,
} from "../engine/config/mod.ts";
import { differingLeaves, leafPaths } from "./config-leaves.ts";
import { GridError } from "./grid-error.ts";
import {
  AGENT_METRICS,
  type Claim,
  type Comparison,
  type GridCellSpec,
  type GridFile,
  gridSchema,
  ONE_CELL_EXPECTATIONS,
} from "./grid-schema.ts";

/** The model name the engine loads without a directory. */
export const EMBEDDED_MODEL = "embedded";

/** A cell with its config file resolved and loaded (seed and steps as the file sets them). */
export interface GridCell extends Omit<GridCellSpec, "config"> {
  /** The config file as the grid names it (relative to the grid file). */
  readonly configFile: string;
  /** Absolute path of the cell's experiment config. */
  readonly configPath: string;
  readonly config: NormalizedConfig;
  /** The preset the config file `extends`; null when it extends none. */
  readonly preset: string | null;
  /**
   * The config keys the file itself sets (dotted paths of its leaves, array items by index,
   * without `extends` and `name`): everything else is the preset's.
   */
  readonly ownKeys: readonly string[];
}

/** A validated grid. */
export interface Grid extends Omit<GridFile, "cells"> {
  readonly kind: "grid";
  /** Absolute path of the grid file. */
  readonly file: string;
  readonly cells: readonly GridCell[];
}

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new GridError(file, [{
      key: "(file)",
      value: file,
      allowed: `a readable grid file (${(e as Error).message})`,
    }]);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new GridError(file, [{
      key: "(file)",
      value: file,
      allowed: `JSON text (${(e as Error).message})`,
    }]);
  }
}

/**
 * What a start run's one evaluation of the initial team depends on: the tasks (and so the
 * benchmark's problems), the workflow, each agent's id, role, prompt and model, sampling, and
 * what is evaluated. Estimator, loss, rewards, updates, optimizer and weight sharing are not in
 * it: before the first update every LoRA adapter is zero, so each agent is its base model.
 *
 * @example
 * ```ts
 * import { loadConfig } from "../engine/config/mod.ts";
 * const a = startIdentity(await loadConfig({ preset: "refine-grpo" }));
 * const b = startIdentity(await loadConfig({ preset: "refine-drmas" }));
 * JSON.stringify(a) === JSON.stringify(b); // true: only the estimator differs
 * ```
 */
export function startIdentity(config: NormalizedConfig): Record<string, unknown> {
  return {
    tasks: config.tasks,
    workflow: config.workflow,
    agents: config.agents.map((a) => ({
      id: a.id,
      role: a.role,
      prompt: a.prompt,
      model: a.model,
    })),
    sampling: config.sampling,
    evaluation: {
      benchmarks: config.evaluation.benchmarks,
      n_samples: config.evaluation.n_samples,
    },
  };
}

/**
 * Issues of the cells' `start`: an unknown cell, a cell that does not run its own start run, or
 * one whose initial team or evaluation differs from the cell's.
 */
function startIssues(grid: GridFile, cells: ReadonlyMap<string, GridCell>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const specs = new Map(grid.cells.map((c) => [c.id, c]));
  grid.cells.forEach((cell, i) => {
    if (cell.start === undefined || cell.start === cell.id) return;
    const key = `cells[${i}].start`;
    const owner = specs.get(cell.start);
    if (owner === undefined) {
      issues.push({
        key,
        value: cell.start,
        allowed: `a cell id (${grid.cells.map((c) => c.id).join(", ")})`,
      });
      return;
    }
    if (owner.start !== owner.id) {
      issues.push({
        key,
        value: cell.start,
        allowed: `a cell that runs its own start run (${owner.id} ${
          owner.start === undefined ? "has no start" : `shares ${owner.start}'s`
        }; name the cell whose run it shares, or give ${owner.id} "start": "${owner.id}")`,
      });
      return;
    }
    const [mine, theirs] = [cells.get(cell.id)?.config, cells.get(owner.id)?.config];
    if (mine === undefined || theirs === undefined) return;
    const differ = differingLeaves(startIdentity(mine), startIdentity(theirs));
    if (differ.length > 0) {
      const shown = differ.length > 6 ? [...differ.slice(0, 6), "..."] : differ;
      issues.push({
        key,
        value: cell.start,
        allowed: `a cell whose start run evaluates this cell's initial team on its benchmark ` +
          `(${owner.id}'s config differs from ${cell.id}'s in ${shown.join(", ")}); name ` +
          `"${cell.id}" to run its own`,
      });
    }
  });
  return issues;
}

function duplicates(ids: readonly string[]): Set<string> {
  return new Set(ids.filter((x, i) => ids.indexOf(x) !== i));
}

/** Issues of one claim: unknown or outside cells, and metric/expectation pairs that do not fit. */
function claimIssues(
  claim: Claim,
  key: string,
  comparison: Comparison,
  cells: ReadonlyMap<string, GridCell>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const members = [comparison.baseline, ...comparison.cells];
  const inComparison = `one of this comparison's cells (${members.join(", ")})`;
  if (!members.includes(claim.cell)) {
    issues.push({ key: `${key}.cell`, value: claim.cell, allowed: inComparison });
  }
  if (claim.against !== undefined && !members.includes(claim.against)) {
    issues.push({ key: `${key}.against`, value: claim.against, allowed: inComparison });
  }
  const against = claim.against ?? comparison.baseline;
  const oneCell = ONE_CELL_EXPECTATIONS.includes(claim.expect);
  if (!oneCell && against === claim.cell) {
    issues.push({
      key: `${key}.against`,
      value: against,
      allowed: `a cell other than ${claim.cell} (the claim compares two cells)`,
    });
  }
  if ((claim.metric === "lemma-multiplier") !== oneCell) {
    issues.push({
      key: `${key}.expect`,
      value: claim.expect,
      allowed: claim.metric === "lemma-multiplier"
        ? `"not-one" or "above-one" for metric lemma-multiplier (a one-cell test against 1)`
        : `"higher", "lower" or "not-lower" for metric ${claim.metric}`,
    });
  }
  if (claim.agent !== undefined) {
    if (!AGENT_METRICS.includes(claim.metric)) {
      issues.push({
        key: `${key}.agent`,
        value: claim.agent,
        allowed: `no agent for metric ${claim.metric} (it is measured once per run)`,
      });
    }
    for (const c of oneCell ? [claim.cell] : [claim.cell, against]) {
      const agents = cells.get(c)?.config.agents.map((a) => a.id);
      if (agents && !agents.includes(claim.agent)) {
        issues.push({
          key: `${key}.agent`,
          value: claim.agent,
          allowed: `an agent of cell ${c} (${agents.join(", ")})`,
        });
      }
    }
  }
  if (claim.metric === "critic-improvement") {
    for (const c of [claim.cell, against]) {
      const w = cells.get(c)?.config.workflow;
      if (w && !(w.kind === "debate" && w.critics > 0 && w.rounds > 1)) {
        issues.push({
          key: `${key}.metric`,
          value: claim.metric,
          allowed: `a metric cell ${c} measures (critic-improvement needs a debate with critics)`,
        });
      }
    }
  }
  return issues;
}

/** Issues across the grid: duplicate ids, unknown cells, undeclared models. */
function crossIssues(grid: GridFile, cells: ReadonlyMap<string, GridCell>): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const known = `a cell id (${grid.cells.map((c) => c.id).join(", ")})`;
  for (const d of duplicates(grid.cells.map((c) => c.id))) {
    issues.push({ key: "cells", value: d, allowed: "unique cell ids" });
  }
  for (const d of duplicates(grid.comparisons.map((c) => c.id))) {
    issues.push({ key: "comparisons", value: d, allowed: "unique comparison ids" });
  }
  issues.push(...startIssues(grid, cells));
  grid.comparisons.forEach((comparison, i) => {
    const key = `comparisons[${i}]`;
    if (!cells.has(comparison.baseline)) {
      issues.push({ key: `${key}.baseline`, value: comparison.baseline, allowed: known });
    }
    comparison.cells.forEach((c, j) => {
      if (!cells.has(c)) issues.push({ key: `${key}.cells[${j}]`, value: c, allowed: known });
      if (c === comparison.baseline) {
        issues.push({
          key: `${key}.cells[${j}]`,
          value: c,
          allowed: "a cell other than the baseline",
        });
      }
    });
    comparison.claims.forEach((claim, j) => {
      issues.push(...claimIssues(claim, `${key}.claims[${j}]`, comparison, cells));
    });
  });
  const undeclared = new Map<string, string[]>();
  for (const cell of cells.values()) {
    for (const agent of cell.config.agents) {
      if (agent.model !== EMBEDDED_MODEL && !(agent.model in grid.models)) {
        undeclared.set(agent.model, [
          ...undeclared.get(agent.model) ?? [],
          `${cell.id}.${agent.id}`,
        ]);
      }
    }
  }
  for (const [model, users] of undeclared) {
    issues.push({
      key: `models[${JSON.stringify(model)}]`,
      value: undefined,
      allowed: `the command that produces the model of ${users.join(", ")}`,
    });
  }
  return issues;
}

/**
 * Loads `file` and every cell's config; throws GridError listing every problem (a cell config's
 * own ConfigError issues are folded in under `cells[i].config`).
 *
 * @example
 * ```ts
 * const grid = await loadGrid("study/grid.json");
 * grid.cells.map((c) => [c.id, c.config.workflow.kind]);
 * ```
 */
export async function loadGrid(file: string): Promise<Grid> {
  const path = resolve(file);
  const raw = await readJson(path);
  const parsed = gridSchema.safeParse(raw);
  if (!parsed.success) throw new GridError(path, issuesFromZod(parsed.error, gridSchema, raw));
  const spec = parsed.data;
  const issues: ConfigIssue[] = [];
  const cells = new Map<string, GridCell>();
  for (const [i, cell] of spec.cells.entries()) {
    const configPath = resolve(dirname(path), cell.config);
    try {
      const config = await loadConfig({
        file: configPath,
        onWarning: (line) => console.error(`warning: cell ${cell.id}: ${line}`),
      });
      // loadConfig read the same file as a JSON object.
      const { extends: preset, name: _name, ...own } = JSON.parse(
        await Deno.readTextFile(configPath),
      );
      cells.set(
        cell.id,
        Object.freeze({
          id: cell.id,
          title: cell.title,
          ...(cell.start === undefined ? {} : { start: cell.start }),
          configFile: cell.config,
          configPath,
          config,
          preset: typeof preset === "string" ? preset : null,
          ownKeys: leafPaths(own),
        }),
      );
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const issue of err.issues) {
        issues.push({
          key: `cells[${i}].config`,
          value: cell.config,
          allowed: `a valid experiment config (${formatIssue(issue)})`,
        });
      }
    }
  }
  issues.push(...crossIssues(spec, cells));
  if (issues.length > 0) throw new GridError(path, issues);
  return Object.freeze({
    ...spec,
    kind: "grid",
    file: path,
    cells: spec.cells.map((c) => cells.get(c.id)!),
  });
}

/**
 * The cells `--only` selects (comma-separated ids), in grid order; all cells without a selection.
 *
 * @example
 * ```ts
 * const grid = await loadGrid("study/grid.json");
 * selectCells(grid, "refine-grpo,refine-drmas").map((c) => c.id);
 * ```
 */
export function selectCells(grid: Grid, only?: string): readonly GridCell[] {
  if (only === undefined) return grid.cells;
  const wanted = only.split(",").map((s) => s.trim()).filter(Boolean);
  const ids = grid.cells.map((c) => c.id);
  const unknown = wanted.filter((w) => !ids.includes(w));
  if (wanted.length === 0 || unknown.length > 0) {
    throw new GridError(grid.file, [{
      key: "--only",
      value: only,
      allowed: `comma-separated cell ids of the grid (${ids.join(", ")})`,
    }]);
  }
  return grid.cells.filter((c) => wanted.includes(c.id));
}
