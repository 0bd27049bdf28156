import { textTable, toCsv } from "../../events/cli/mod.ts";
import type { QueryTable } from "./run-query.ts";

/** Text formats of `deno task sql`; parquet is written by `writeQueryParquet`. */
export type QueryTextFormat = "table" | "csv" | "json";

function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === "bigint") {
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  }
  return value;
}

/**
 * Renders a query result as a terminal table, CSV, or a JSON array of row objects (BIGINTs as
 * numbers when exact, else as strings; NaN and infinities as null).
 *
 * @example
 * ```ts
 * import { formatQueryTable } from "./format-query-table.ts";
 * import type { QueryTable } from "./run-query.ts";
 * declare const table: QueryTable;
 *
 * console.log(formatQueryTable(table, "csv"));
 * ```
 */
export function formatQueryTable(table: QueryTable, format: QueryTextFormat): string {
  if (format === "table") return textTable(table.columns, table.rows);
  if (format === "csv") return toCsv(table.columns, table.rows);
  const objects = table.rows.map((r) => Object.fromEntries(table.columns.map((c, i) => [c, r[i]])));
  return JSON.stringify(objects, jsonValue, 2) + "\n";
}
