/** A statement the read-only SQL surface refuses: names the statement type and what is allowed. */
export class WriteRefusedError extends Error {
  override name = "WriteRefusedError";
  constructor(readonly statementType: string) {
    super(
      `refused: ${statementType} statements are not allowed; the analysis tables are read-only ` +
        `projections of the event log (use SELECT, WITH, DESCRIBE, SHOW, SUMMARIZE or EXPLAIN)`,
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
