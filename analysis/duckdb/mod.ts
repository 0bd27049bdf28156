/** Kysely over DuckDB: the dialect and its value conventions. */
export { DuckDBDialect, type DuckDBDialectConfig } from "./duckdb-dialect.ts";
export { type BigintMode, UnsafeIntegerError } from "./duckdb-values.ts";
