import { Island } from "../components/island.tsx";
import type { RunRow } from "../data/runs-list.ts";
import { RunsTable } from "../islands/runs-table.tsx";

/**
 * Every run in the store, as of log `position`; the table then follows the store live (an
 * empty store's notice gives way to the first run as soon as it starts).
 *
 * @example
 * ```tsx
 * <RunsPage position={position} runs={await listRuns(db)} />
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
