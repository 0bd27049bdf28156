/**
 * What a page's data needs of the dashboard's source: reads of its projections, one at a time.
 * The server's `DashboardSource` (web/server/dashboard-source.ts) is one; the data modules name
 * this type rather than that one, so web/data never imports web/server.
 *
 * @example
 * ```ts
 * import type { AnalysisReader } from "./analysis-reader.ts";
 * declare const source: AnalysisReader;
 * const runs = await source.read((a) => a.db.selectFrom("runs").selectAll().execute());
 * ```
 */
import type { Analysis } from "../../analysis/mod.ts";

/** Reads of the dashboard's projections and their log position; reads never overlap. */
export interface AnalysisReader {
  /** Runs `read` with the projections and the log position they describe. */
  read<T>(read: (analysis: Analysis, position: number) => Promise<T>): Promise<T>;
}
