/**
 * Which reference a cell follows: the preset its config file extends, that preset's reference
 * (engine/config's PRESET_REFERENCES: the script or paper it follows, with line citations in the
 * preset's comments), and the keys the cell's own file sets over the preset.
 */
import { PRESET_REFERENCES } from "../engine/config/mod.ts";
import type { GridCell } from "./load-grid.ts";

/** A cell's preset and reference. */
export interface CellFollows {
  /** The preset the cell's config file extends; null when it extends none. */
  readonly preset: string | null;
  /** The preset's reference in full; null without a preset. */
  readonly reference: string | null;
  /** Config keys the cell's file sets itself (dotted paths); the rest are the preset's. */
  readonly ownKeys: readonly string[];
}

/**
 * What `cell` follows.
 *
 * @example
 * ```ts
 * import { loadGrid } from "./load-grid.ts";
 * const grid = await loadGrid("study/grid.json");
 * cellFollows(grid.cells[0]).preset; // "refine-grpo"
 * ```
 */
export function cellFollows(cell: Pick<GridCell, "preset" | "ownKeys">): CellFollows {
  return {
    preset: cell.preset,
    reference: cell.preset === null ? null : PRESET_REFERENCES[cell.preset] ?? null,
    ownKeys: cell.ownKeys,
  };
}

/**
 * A reference as a table cell: the first script or file it cites (backquoted, without a leading
 * `examples/`), else its text up to the first parenthesis, colon or comma.
 *
 * @example
 * ```ts
 * referenceShort("Dr. MAS `examples/drmas_trainer/run_math.sh` and `core_algos.py`"); // "drmas_trainer/run_math.sh"
 * referenceShort("the MADA-RL paper (Table 6 and Sec. 3; no code published)"); // "the MADA-RL paper"
 * ```
 */
export function referenceShort(reference: string): string {
  const file = [...reference.matchAll(/`([^`]+)`/g)].map((m) => m[1])
    .find((x) => /\/|\.(sh|py|yaml|ts)$/.test(x));
  if (file !== undefined) return file.replace(/^examples\//, "");
  return reference.split(/[(:,]/)[0].trim();
}

/**
 * The setup table's "follows" cell: the preset and its short reference.
 *
 * @example
 * ```ts
 * followsText({ preset: "debate-mada", reference: "the MADA-RL paper (Table 6)", ownKeys: [] });
 * // "debate-mada (the MADA-RL paper)"
 * ```
 */
export function followsText(f: CellFollows): string {
  if (f.preset === null) return "no preset";
  return f.reference === null ? f.preset : `${f.preset} (${referenceShort(f.reference)})`;
}
