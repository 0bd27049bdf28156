import type { DuckDBConnection } from "@duckdb/node-api";
import type { CompiledQuery, DatabaseConnection, QueryResult } from "kysely";
import { type BigintMode, convertRows, toDuckDBValue } from "./duckdb-values.ts";

const WRITE_NODES = new Set([
  "InsertQueryNode",
  "UpdateQueryNode",
  "DeleteQueryNode",
  "MergeQueryNode",
]);

/**
 * One Kysely connection over one DuckDB connection. Result rows go through `convertRows` so
 * count(*) (a BIGINT) arrives as a checked number rather than a bigint.
 */
export class DuckDBKyselyConnection implements DatabaseConnection {
  constructor(readonly native: DuckDBConnection, private readonly bigint: BigintMode) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const reader = await this.native.runAndReadAll(query.sql, query.parameters.map(toDuckDBValue));
    if (!WRITE_NODES.has(query.query.kind)) {
      return { rows: convertRows<R>(reader.getRowObjectsJS(), this.bigint) };
    }
    // Without RETURNING DuckDB answers a write with one "Count" row; Kysely wants no rows and
    // the count in numAffectedRows. With RETURNING the rows are the returned ones.
    if ("returning" in query.query && query.query.returning) {
      const rows = convertRows<R>(reader.getRowObjectsJS(), this.bigint);
      return { rows, numAffectedRows: BigInt(rows.length) };
    }
    return { rows: [], numAffectedRows: BigInt(reader.rowsChanged) };
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    const result = await this.native.stream(query.sql, query.parameters.map(toDuckDBValue));
    let batch: R[] = [];
    for await (const rows of result.yieldRowObjectJs()) {
      batch.push(...convertRows<R>(rows, this.bigint));
      while (batch.length >= chunkSize) {
        yield { rows: batch.slice(0, chunkSize) };
        batch = batch.slice(chunkSize);
      }
    }
    if (batch.length > 0) yield { rows: batch };
  }
}
