/**
 * A GitHub-flavoured Markdown table; pipes inside cells are escaped.
 *
 * @example
 * ```ts
 * markdownTable(["group", "acc"], [["grpo", "41.9 ± 0.3"]]);
 * ```
 */
export function markdownTable(
  header: readonly string[],
  rows: readonly (readonly string[])[],
): string {
  const esc = (s: string) => s.replaceAll("|", "\\|");
  return [
    `| ${header.map(esc).join(" | ")} |`,
    `|${header.map((_, i) => i === 0 ? " --- " : " ---: ").join("|")}|`,
    ...rows.map((r) => `| ${r.map(esc).join(" | ")} |`),
  ].join("\n");
}
