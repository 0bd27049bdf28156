/**
 * A statement the read-only SQL surface refuses because DuckDB's parser does not read it as one
 * SELECT: names the text's leading keyword and what is allowed instead.
 */
export class WriteRefusedError extends Error {
  override name = "WriteRefusedError";
  constructor(readonly statementType: string) {
    super(
      `refused: ${statementType} statements are not allowed; DuckDB does not read this as a ` +
        `SELECT, and the analysis tables are read-only projections of the event log: one SELECT ` +
        `(or WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE) runs here. EXPLAIN is refused ` +
        `too, since EXPLAIN ANALYZE runs the statement it explains; to save a result, use ` +
        `deno task sql --out FILE`,
    );
  }
}

/** SQL that DuckDB could not parse or bind; carries DuckDB's own explanation. */
export class MalformedSqlError extends Error {
  override name = "MalformedSqlError";
  constructor(readonly sql: string, readonly reason: string) {
    super(`malformed SQL: ${reason}`);
  }
}

/** A query that ran past its time limit and was interrupted inside DuckDB. */
export class QueryTimeoutError extends Error {
  override name = "QueryTimeoutError";
  constructor(readonly timeoutMs: number) {
    super(
      `the query ran longer than ${timeoutMs} ms and was interrupted; narrow it (WHERE, LIMIT, ` +
        `fewer joins), run it with deno task sql, or start the dashboard with a larger ` +
        `--query-timeout-ms`,
    );
  }
}
