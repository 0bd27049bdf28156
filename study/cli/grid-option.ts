/**
 * The `--grid FILE` option the study commands share, and loading it: a grid that does not load is
 * a usage error (exit 2) naming every problem of the file.
 */
import { UsageError } from "../../events/cli/mod.ts";
import { GridError } from "../grid-error.ts";
import { type Grid, loadGrid } from "../load-grid.ts";

/**
 * The option's declaration; `help` says what the command does with the grid.
 *
 * @example
 * ```ts
 * const options = { grid: gridOption("grid to plan") };
 * options.grid.help; // "grid to plan (default study/grid.json)"
 * ```
 */
export function gridOption(purpose: string) {
  return {
    type: "string",
    default: "study/grid.json",
    value: "FILE",
    path: true,
    help: `${purpose} (default study/grid.json)`,
  } as const;
}

/**
 * Loads the grid a command was given; `select` (e.g. the `--only` cells) runs under the same
 * rule, so its GridError is a usage error too.
 *
 * @example
 * ```ts
 * const grid = await gridFromOption("study/grid.json");
 * const cells = await gridFromOption("study/grid.json", (g) => g.cells.map((c) => c.id));
 * ```
 */
export async function gridFromOption<T = Grid>(
  file: string,
  select: (grid: Grid) => T = (grid) => grid as T,
): Promise<T> {
  try {
    return select(await loadGrid(file));
  } catch (err) {
    if (err instanceof GridError) throw new UsageError(err.message);
    throw err;
  }
}
