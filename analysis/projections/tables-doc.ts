/**
 * analysis/TABLES.md's "Base tables" section, generated from the table declarations (tables.ts):
 * a heading, what the table holds and a row per column (name, DuckDB type, meaning). The rest of
 * the file (the views, examples) is written by hand; the section sits between two markers.
 *
 * @example
 * ```ts
 * const doc = await Deno.readTextFile("analysis/TABLES.md");
 * await Deno.writeTextFile("analysis/TABLES.md", await tablesDoc(doc));
 * ```
 */
import { type AnyTable, TABLES } from "./tables.ts";

export const SECTION_BEGIN = "<!-- Generated from analysis/projections/tables.ts by " +
  "`deno task docs`: edit the declarations there, not this section. -->";
export const SECTION_END = "<!-- End of the generated section. -->";

/** TABLES.md lacks a marker of the generated section (or has them out of order). */
export class TablesDocMarkerError extends Error {
  override name = "TablesDocMarkerError";
  constructor(readonly missing: string) {
    super(`analysis/TABLES.md has no ${missing} line: put the two markers where the section goes`);
  }
}

/** A markdown table (`deno fmt` pads its columns). */
function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

/** One table's section: its heading, what it holds, its columns. */
function tableSection(table: AnyTable): string {
  const rows = table.columnList.map((
    [name, c],
  ) => [name, c.type, c.meaning.replaceAll("|", "\\|")]);
  return `### ${table.name}\n\n${table.about}\n\n${
    markdownTable(["column", "type", "meaning"], rows)
  }`;
}

/** The generated section of `tables`, markers included. */
export function tablesSection(tables: readonly AnyTable[] = Object.values(TABLES)): string {
  return [SECTION_BEGIN, ...tables.map(tableSection), SECTION_END].join("\n\n");
}

/** `doc` with the text between its markers replaced by the generated section. */
export function withTablesSection(
  doc: string,
  tables: readonly AnyTable[] = Object.values(TABLES),
): string {
  const begin = doc.indexOf(SECTION_BEGIN);
  if (begin < 0) throw new TablesDocMarkerError(SECTION_BEGIN);
  const end = doc.indexOf(SECTION_END, begin);
  if (end < 0) throw new TablesDocMarkerError(SECTION_END);
  return doc.slice(0, begin) + tablesSection(tables) + doc.slice(end + SECTION_END.length);
}

/** The project's `deno fmt` could not format the generated markdown. */
export class MarkdownFormatError extends Error {
  override name = "MarkdownFormatError";
  constructor(readonly stderr: string) {
    super(`deno fmt failed on the generated TABLES.md: ${stderr}`);
  }
}

/**
 * TABLES.md as `deno task docs` writes it: `doc` with the generated section, formatted by the
 * project's `deno fmt` (its prose wrap and table padding), so the file stays formatted and the
 * generator never imitates the formatter.
 */
export async function tablesDoc(
  doc: string,
  tables: readonly AnyTable[] = Object.values(TABLES),
): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext", "md", "-"],
    cwd: new URL("../..", import.meta.url),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(withTablesSection(doc, tables)));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new MarkdownFormatError(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}
