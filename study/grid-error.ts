/**
 * An invalid study grid: every problem names its key (`comparisons[1].claims[0].cell`), the value
 * found and what is allowed, like a ConfigError; one GridError carries all problems of a file.
 */
import { type ConfigIssue, formatIssue } from "../engine/config/mod.ts";

/**
 * The grid file cannot be used.
 *
 * @example
 * ```ts
 * import { loadGrid } from "./mod.ts";
 * try { await loadGrid("study/grid.json"); } catch (e) {
 *   if (e instanceof GridError) for (const i of e.issues) console.error(i.key, i.allowed);
 * }
 * ```
 */
export class GridError extends Error {
  override name = "GridError";
  constructor(readonly source: string, readonly issues: readonly ConfigIssue[]) {
    super(`invalid study grid ${source}:\n${issues.map((i) => `  ${formatIssue(i)}`).join("\n")}`);
  }
}
