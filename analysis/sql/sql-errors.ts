/**
 * A statement the read-only SQL surface refuses because DuckDB's parser does not read it as one
 * SELECT: names the text's leading keyword and what is allowed instead.
 */
export class WriteRefusedError extends Error {
  override name = "WriteRefusedError";
  constructor(readonly statementType: string, message?: string) {
    super(
      message ??
        `refused: ${statementType} statements are not allowed; DuckDB does not read this as a ` +
          `SELECT, and the analysis tables are read-only projections of the event log: one ` +
          `SELECT (or WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE) runs here. EXPLAIN is ` +
          `refused too, since EXPLAIN ANALYZE runs the statement it explains; to save a result, ` +
          `use deno task sql --out FILE`,
    );
  }
}

/**
 * A SELECT that calls a function the read-only SQL surface refuses (see REFUSED_FUNCTIONS in
 * read-only-statement.ts): one that changes DuckDB's state past the query (logging, profiling,
 * the parser), writes files, or runs SQL given as text. A WriteRefusedError, so every caller
 * refuses it as it refuses a write (exit 2, HTTP 403).
 */
export class RefusedFunctionError extends WriteRefusedError {
  override name = "RefusedFunctionError";
  constructor(readonly functionName: string, readonly reason: string) {
    super(
      "SELECT",
      `refused: the function ${functionName}() is not allowed here: it ${reason}. Queries on ` +
        `the analysis tables read them and nothing else: no logging, profiling, parser or ` +
        `checkpoint functions, and no SQL run from a string`,
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

/**
 * A query that ran past its time limit and was interrupted inside DuckDB. `stillRunning`, when
 * set, settles once DuckDB has actually stopped: the interrupt had not taken effect when the
 * caller was answered, and the connection must stay open until then.
 */
export class QueryTimeoutError extends Error {
  override name = "QueryTimeoutError";
  constructor(readonly timeoutMs: number, readonly stillRunning?: Promise<void>) {
    super(
      `the query ran longer than ${timeoutMs} ms and was interrupted; narrow it (WHERE, LIMIT, ` +
        `fewer joins), run it with deno task sql, or start the dashboard with a larger ` +
        `--query-timeout-ms`,
    );
  }
}

/**
 * A result too large to send back: its first row alone is over the byte limit (a result whose
 * later rows pass the limit is cut short and marked truncated instead).
 */
export class ResultTooLargeError extends Error {
  override name = "ResultTooLargeError";
  constructor(readonly maxBytes: number) {
    super(
      `the query's first row is over ${maxBytes} bytes, more than one answer may hold; select ` +
        `fewer or shorter values (left(text, 1000), length(text)), or run it with deno task sql`,
    );
  }
}
