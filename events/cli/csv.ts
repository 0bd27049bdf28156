import { cellText } from "./cell-text.ts";

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * RFC 4180 CSV: header line then one line per row; fields holding a comma, quote or newline are
 * quoted with quotes doubled.
 *
 * @example
 * ```ts
 * import { toCsv } from "./csv.ts";
 *
 * toCsv(["a", "b"], [[1, "x,y"]]); // 'a,b\n1,"x,y"\n'
 * ```
 */
export function toCsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const lines = [columns.map(csvField).join(",")];
  for (const row of rows) lines.push(row.map((v) => csvField(cellText(v))).join(","));
  return lines.join("\n") + "\n";
}
