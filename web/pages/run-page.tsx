import { Island } from "../components/island.tsx";
import type { RunRow } from "../data/runs-list.ts";
import type { EvalRow, PlacementCell } from "../data/run-details.ts";
import type { TrajectoryPage } from "../data/trajectory-page.ts";
import { RunLive, type RunLiveProps } from "../islands/run-live.tsx";
import { EvalTable, PlacementTimeline, TrajectoryBrowser } from "./run-sections.tsx";

/** Everything the Run page shows. */
export interface RunPageProps {
  readonly run: RunRow;
  readonly live: RunLiveProps;
  readonly evals: readonly EvalRow[];
  readonly placements: readonly PlacementCell[];
  readonly trajectories: TrajectoryPage | null;
}

/**
 * One run: live charts, evaluations, placements, and the trajectory browser.
 *
 * @example
 * ```tsx
 * <RunPage run={run} live={live} evals={evals} placements={cells} trajectories={page} />
 * ```
 */
export function RunPage({ run, live, evals, placements, trajectories }: RunPageProps) {
  const facts: [string, string | number | null][] = [
    ["workflow", run.workflow],
    ["estimator", run.estimator],
    ["agents", run.agents],
    ["models", run.models],
    ["seed", run.seed],
    ["started (UTC)", run.startedAt],
    ["finished (UTC)", run.endedAt],
  ];
  return (
    <>
      <h1>Run {run.runId}</h1>
      <div class="facts">
        {facts.map(([k, v]) => (
          <div key={k}>
            <span>{k}</span>
            {v ?? "—"}
          </div>
        ))}
      </div>
      <Island name="run-live" component={RunLive} props={live} />
      <h2>Evaluations</h2>
      <EvalTable evals={evals} />
      <h2>
        Worker-group load/offload timeline (last {new Set(placements.map((p) => p.step)).size}{" "}
        steps)
      </h2>
      <PlacementTimeline cells={placements} />
      <h2 id="trajectories">Trajectories</h2>
      {trajectories
        ? <TrajectoryBrowser runId={run.runId} lastStep={run.steps - 1} page={trajectories} />
        : <p class="muted">No step yet.</p>}
    </>
  );
}
