/**
 * The README's estimator table, generated from the registry: one row per estimator with its
 * scope and the formula and source cells its entry holds. `deno task docs` writes it between two
 * markers in README.md, and a test fails when the README's copy differs, so the table cannot
 * drift from the estimators the engine runs.
 *
 * @example
 * ```ts
 * const readme = await Deno.readTextFile("README.md");
 * await Deno.writeTextFile("README.md", withEstimatorTable(readme));
 * ```
 */
import { DEFAULT_ESTIMATOR, ESTIMATOR_NAMES, estimatorEntry } from "./registry.ts";

/** The line before the generated table in README.md. */
export const ESTIMATOR_TABLE_BEGIN =
  "<!-- estimator table: generated from engine/advantages/registry.ts by deno task docs -->";
/** The line after it. */
export const ESTIMATOR_TABLE_END = "<!-- end of the generated estimator table -->";

const HEADER = ["`estimator.kind`", "scope", "advantage of an action", "source (paper; code)"];

/** The document has no (or a broken) pair of estimator-table markers to write between. */
export class EstimatorTableMarkersError extends Error {
  override name = "EstimatorTableMarkersError";
}

/**
 * The table as Markdown, its columns padded as `deno fmt` pads them (so the formatter leaves the
 * generated text alone).
 */
export function estimatorTable(): string {
  const rows = ESTIMATOR_NAMES.map((name) => {
    const entry = estimatorEntry(name);
    const kind = name === DEFAULT_ESTIMATOR ? `\`${name}\` (default)` : `\`${name}\``;
    return [kind, entry.scope, entry.formula, entry.source];
  });
  const widths = HEADER.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(HEADER), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

/**
 * `document` with the text between its estimator-table markers replaced by the generated table;
 * `origin` names the document in the error when the markers are missing or out of order.
 */
export function withEstimatorTable(document: string, origin = "README.md"): string {
  const begin = document.indexOf(ESTIMATOR_TABLE_BEGIN);
  const end = document.indexOf(ESTIMATOR_TABLE_END);
  if (begin < 0 || end < begin) {
    throw new EstimatorTableMarkersError(
      `${origin} has no place for the estimator table: put the lines ${ESTIMATOR_TABLE_BEGIN} ` +
        `and ${ESTIMATOR_TABLE_END}, in that order, where it belongs`,
    );
  }
  return `${document.slice(0, begin + ESTIMATOR_TABLE_BEGIN.length)}\n\n${estimatorTable()}\n\n` +
    document.slice(end);
}
