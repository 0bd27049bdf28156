import { cellText } from "./cell-text.ts";

/**
 * A boxed plain-text table for a terminal: numbers right-aligned, text left-aligned, and a
 * closing row count.
 *
 * @example
 * ```ts
 * import { textTable } from "./text-table.ts";
 *
 * console.log(textTable(["n"], [[3]]));
 * ```
 */
export function textTable(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): string {
  const cells = rows.map((r) => r.map(cellText));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const numeric = columns.map((_, i) =>
    rows.length > 0 &&
    rows.every((r) => r[i] === null || typeof r[i] === "number" || typeof r[i] === "bigint")
  );
  const line = (vals: readonly string[], alignRight: readonly boolean[]) =>
    "| " + vals.map((v, i) =>
      alignRight[i] ? v.padStart(widths[i]) : v.padEnd(widths[i])
    ).join(" | ") + " |";
  const rule = "+" + widths.map((w) => "-".repeat(w + 2)).join("+") + "+";
  const out = [rule, line(columns, columns.map(() => false)), rule];
  for (const r of cells) out.push(line(r, numeric));
  out.push(rule, `(${rows.length} row${rows.length === 1 ? "" : "s"})`);
  return out.join("\n");
}
