/**
 * The analysis layer: DuckDB projections of the event log, typed queries through Kysely, the
 * paper metrics and statistics, and reports. Tables are documented in analysis/TABLES.md.
 *
 * ```ts
 * import { loadRunSummaries, openAnalysis, buildReport, renderReport } from "../analysis/mod.ts";
 *
 * await using a = await openAnalysis(".polyrl/events.sqlite");
 * const ids = (await a.db.selectFrom("runs").select("run_id").execute()).map((r) => r.run_id);
 * const report = buildReport(await loadRunSummaries(a.db, ids), { groupBy: "estimator" });
 * console.log(renderReport(report, "md"));
 * ```
 *
 * @module
 */
export * from "./stats/mod.ts";
export * from "./report/mod.ts";
export { markdownTable } from "./format/markdown-table.ts";
export { DuckDBDialect, type DuckDBDialectConfig, UnsafeIntegerError } from "./duckdb/mod.ts";
export { catchUp, type CatchUpResult, ensureSchema, rebuild } from "./projections/projector.ts";
export { EXPORTED, SCHEMA_VERSION } from "./projections/schema.ts";
export type { AnalysisDb } from "./queries/analysis-db.ts";
export { analysisPath } from "./queries/analysis-path.ts";
export { type Analysis, analysisOf, openAnalysis } from "./queries/open-analysis.ts";
export { type OpenGeneration, openGeneration } from "./queries/open-generation.ts";
export { type ProjectionsFolder, projectionsFolder } from "./queries/projections-folder.ts";
export { leasesCurrent } from "./projections/copy-leases.ts";
export { type FileAccess, sealDuckDB } from "./sql/seal-duckdb.ts";
export { sqlString } from "./sql/sql-string.ts";
export { criticImprovementOfRun } from "./queries/critic-query.ts";
export { resolveRuns, UnknownRunError } from "./queries/resolve-runs.ts";
export {
  DEFAULT_SELECTION,
  describeSelection,
  heldRuns,
  NoRunsSelectedError,
  parseSelection,
  RUN_KINDS,
  RUN_STATUSES,
  type RunSelection,
  RunSelectionError,
  selectedRunIds,
  SELECTION_COLUMNS,
  selectionFailure,
  type SelectionFilters,
  selectionStatement,
  selectRuns,
} from "./queries/run-selection.ts";
export { loadRunSummaries } from "./queries/run-summaries.ts";
export { type QueryTable, runReadOnlyQuery, writeQueryParquet } from "./sql/run-query.ts";
export { formatQueryTable, type QueryTextFormat } from "./sql/format-query-table.ts";
export {
  MalformedSqlError,
  QueryTimeoutError,
  RefusedFunctionError,
  ResultTooLargeError,
  WriteRefusedError,
} from "./sql/sql-errors.ts";
export { REFUSED_FUNCTIONS } from "./sql/read-only-statement.ts";
