import { Island } from "../components/island.tsx";
import type { RunRow } from "../data/runs-list.ts";
import { RunsTable } from "../islands/runs-table.tsx";

/**
 * Every run in the store, as of log `position`; the table then follows the store live (an
 * empty store's notice gives way to the first run as soon as it starts).
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { listRuns } from "../data/runs-list.ts";
 * declare const analysis: Analysis;
 * declare const position: number; // the log position the analysis was read at
 * <RunsPage position={position} runs={await listRuns(analysis.db)} />
 * ```
 */
export function RunsPage({ position, runs }: { position: number; runs: readonly RunRow[] }) {
  return (
    <>
      <h1>Runs</h1>
      <Island name="runs-table" component={RunsTable} props={{ position, runs }} />
    </>
  );
}
