/** Paper-style reports of runs grouped by a config key across seeds, and their number formats. */
export { buildReport, type Report, type ReportOptions } from "./build-report.ts";
export {
  renderReport,
  type ReportCsv,
  reportCsvTables,
  type ReportFormat,
  type ReportTextFormat,
} from "./render-report.ts";
export { ReportError } from "./report-error.ts";
export { count, figure, points, pValue, signedPoints } from "./report-numbers.ts";
export type { ProblemComparison, ProblemPair } from "./problem-comparison.ts";
export {
  type AccuracyMetric,
  type AgentMultipliers,
  AVERAGE,
  type BenchmarkOutcomes,
  type ConfigValue,
  type ProblemOutcome,
  type RunSummary,
  type WorkerGroupNorms,
} from "./run-summary.ts";
