import { Island } from "../components/island.tsx";
import type { RunRow } from "../data/runs-list.ts";
import type { EvalRow, PlacementCell, RunFacts } from "../data/run-details.ts";
import type { TrajectoryPage } from "../data/trajectory-page.ts";
import { RunLive, type RunLiveProps } from "../islands/run-live.tsx";
import {
  AttemptsTable,
  EvalProtocolFacts,
  EvalTable,
  PlacementTimeline,
  RunStateNotice,
  TrajectoryBrowser,
} from "./run-sections.tsx";

/** Everything the Run page shows. */
export interface RunPageProps {
  readonly run: RunRow;
  readonly facts: RunFacts;
  readonly live: RunLiveProps;
  readonly evals: readonly EvalRow[];
  readonly placements: readonly PlacementCell[];
  readonly trajectories: TrajectoryPage;
}

/**
 * One run: what it is (its training setup, or an evaluation's protocol), how it ended (its error,
 * the command to continue it, its attempts), live charts, evaluations, placements, and the
 * trajectory browser. Each section says so when the run has nothing for it yet.
 *
 * @example
 * ```tsx
 * import type { EvalRow, PlacementCell, RunFacts } from "../data/run-details.ts";
 * import type { RunRow } from "../data/runs-list.ts";
 * import type { TrajectoryPage } from "../data/trajectory-page.ts";
 * import type { RunLiveProps } from "../islands/run-live.tsx";
 * declare const run: RunRow; // listRuns(db, runId)
 * declare const facts: RunFacts; // runFacts(db, runId)
 * declare const live: RunLiveProps; // what the live charts start from
 * declare const evals: readonly EvalRow[]; // runEvals(db, runId)
 * declare const cells: readonly PlacementCell[]; // recentPlacements(db, runId, 40)
 * declare const page: TrajectoryPage; // trajectoryPage(db, runId, query)
 * <RunPage run={run} facts={facts} live={live} evals={evals} placements={cells} trajectories={page} />
 * ```
 */
export function RunPage({ run, facts, live, evals, placements, trajectories }: RunPageProps) {
  const training: [string, string | number | null][] = [
    ["kind", "training"],
    ["workflow", run.workflow],
    ["estimator", run.estimator],
  ];
  const shared: [string, string | number | null][] = [
    ["agents", run.agents],
    ["models", run.models],
    ["seed", run.seed],
    ["started (UTC)", run.startedAt],
    ["finished (UTC)", run.endedAt],
  ];
  const steps = new Set(placements.map((p) => p.step)).size;
  return (
    <>
      <h1>Run {run.runId}</h1>
      <div class="facts">
        {facts.protocol ? <EvalProtocolFacts protocol={facts.protocol} /> : (
          training.map(([k, v]) => (
            <div key={k}>
              <span>{k}</span>
              {v ?? "—"}
            </div>
          ))
        )}
        {shared.map(([k, v]) => (
          <div key={k}>
            <span>{k}</span>
            {v ?? "—"}
          </div>
        ))}
      </div>
      <RunStateNotice run={run} facts={facts} />
      <AttemptsTable attempts={facts.attempts} />
      <Island name="run-live" component={RunLive} props={live} />
      {facts.protocol && (
        <p class="muted">
          An evaluation run trains nothing: its results are the evaluations below.
        </p>
      )}
      <h2>Evaluations</h2>
      <EvalTable evals={evals} />
      {!facts.protocol && (
        <>
          <h2>
            Worker-group load/offload timeline (last {steps} {steps === 1 ? "step" : "steps"})
          </h2>
          {placements.length > 0 && (
            <p class="muted timeline-key">
              Filled: on the device at the step's end. Outlined: loaded or offloaded within the
              step. Hover a cell for its moves.
            </p>
          )}
          <PlacementTimeline cells={placements} />
        </>
      )}
      <h2 id="trajectories">Trajectories</h2>
      <TrajectoryBrowser runId={run.runId} evaluation={!!facts.protocol} page={trajectories} />
    </>
  );
}
