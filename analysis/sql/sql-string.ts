/**
 * A SQL string literal: single quotes doubled. DuckDB has no backslash escapes in plain literals,
 * so nothing inside can end the literal early.
 *
 * @example
 * ```ts
 * sqlString("it's"); // "'it''s'"
 * ```
 */
export function sqlString(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
