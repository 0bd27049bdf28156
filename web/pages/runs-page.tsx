import { Island } from "../components/island.tsx";
import type { RunRow } from "../data/runs-list.ts";
import { RunsTable } from "../islands/runs-table.tsx";

/**
 * Every run in the store.
 *
 * @example
 * ```tsx
 * <RunsPage runs={await listRuns(db)} />
 * ```
 */
export function RunsPage({ runs }: { runs: readonly RunRow[] }) {
  return (
    <>
      <h1>Runs</h1>
      {runs.length === 0
        ? (
          <p class="notice">
            The store has no runs yet. Start one with <code>deno task train</code>.
          </p>
        )
        : <Island name="runs-table" component={RunsTable} props={{ runs }} />}
    </>
  );
}
