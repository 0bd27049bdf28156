/**
 * The reproduction study behind `deno task study`: a grid of experiment configs (study/grid.json)
 * run for several seeds into one store, one replay spot-check per cell, and a report with figures
 * computed from the event log alone. It is an application on top of the other layers
 * (docs/ARCHITECTURE.md, "Layers"): it runs training and replay through their CLIs, reads results
 * through `analysis/mod.ts`, and nothing imports it.
 *
 * @example
 * ```ts
 * import { runStudy } from "./mod.ts";
 * const outcome = await runStudy({
 *   grid: "study/grid.json", store: ".polyrl/study.sqlite", out: "docs/study",
 *   reportOnly: true, jobs: 2, log: console.error,
 * });
 * ```
 *
 * @module
 */
export { GridError } from "./grid-error.ts";
export {
  CHART_KINDS,
  CLAIM_METRICS,
  EXPECTATIONS,
  type GridFile,
  type GridInput,
  gridSchema,
} from "./grid-schema.ts";
export { type Grid, type GridCell, loadGrid, selectCells } from "./load-grid.ts";
export { MissingModelError, missingModels } from "./model-check.ts";
export {
  type PlannedRun,
  type PlannedStart,
  planRuns,
  planStarts,
  runIdFor,
  startRunIdFor,
} from "./plan-runs.ts";
export { runStudy, type StudyOptions, type StudyOutcome } from "./run-study.ts";
export { StudyError } from "./study-error.ts";
export { type StudyResults, studyResults } from "./study-results.ts";
export {
  type ClaimPower,
  claimPower,
  type PairedPower,
  type PowerInput,
  SEED_CAP,
} from "./claim-power.ts";
export { type Pairing, pairingOf } from "./pairing.ts";
export { planPower, type PowerPlan, type PowerRow } from "./plan-power.ts";
export { MissingResultsError, readStudyResults, withPower } from "./read-study-results.ts";
export { renderStudy } from "./render-study.ts";
export { type ChartFile, studyCharts } from "./study-charts.ts";
export { barChartSvg } from "./bar-chart-svg.ts";
export { lineChartSvg } from "./line-chart-svg.ts";
