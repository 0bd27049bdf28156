/**
 * Before a study trains anything, every model directory its cells' agents name must hold a
 * checkpoint; a missing one stops the study with the command that produces it (declared in the
 * grid's `models`), so hours of other cells are not spent first.
 */
import { join, resolve } from "node:path";
import { EMBEDDED_MODEL, type Grid, type GridCell } from "./load-grid.ts";

/** A model directory some cell needs and does not find. */
export interface MissingModel {
  readonly model: string;
  readonly cells: readonly string[];
  /** The grid's command that produces it. */
  readonly command: string;
}

/** One or more model directories are missing; the message names each and its command. */
export class MissingModelError extends Error {
  override name = "MissingModelError";
  constructor(readonly missing: readonly MissingModel[]) {
    super(
      missing.map((m) =>
        `model directory ${m.model} (cells ${m.cells.join(", ")}) has no checkpoint; ` +
        `produce it first with: ${m.command}`
      ).join("\n"),
    );
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/**
 * The models of `cells` whose directory (relative paths from `cwd`) lacks `config.json` or
 * `model.safetensors`, what a Hugging Face checkpoint and `deno task pretrain --out` hold.
 *
 * @example
 * ```ts
 * import { loadGrid } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * const missing = await missingModels(grid, grid.cells);
 * if (missing.length > 0) throw new MissingModelError(missing);
 * ```
 */
export async function missingModels(
  grid: Grid,
  cells: readonly GridCell[],
  cwd = Deno.cwd(),
): Promise<MissingModel[]> {
  const users = new Map<string, string[]>();
  for (const cell of cells) {
    for (const agent of cell.config.agents) {
      if (agent.model === EMBEDDED_MODEL) continue;
      const list = users.get(agent.model) ?? [];
      if (!list.includes(cell.id)) list.push(cell.id);
      users.set(agent.model, list);
    }
  }
  const missing: MissingModel[] = [];
  for (const [model, usedBy] of users) {
    const dir = resolve(cwd, model);
    const present = await isFile(join(dir, "config.json")) &&
      await isFile(join(dir, "model.safetensors"));
    if (!present) missing.push({ model, cells: usedBy, command: grid.models[model] });
  }
  return missing;
}
