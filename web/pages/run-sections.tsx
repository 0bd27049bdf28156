import { formatNumber } from "../components/format.ts";
import type {
  EvalProtocol,
  EvalRow,
  PlacementCell,
  RunAttempt,
  RunFacts,
} from "../data/run-details.ts";
import type { RunRow } from "../data/runs-list.ts";
import {
  TRAJECTORY_PHASES,
  type TrajectoryFilter,
  type TrajectoryPage,
  type TrajectoryPhase,
} from "../data/trajectory-page.ts";
import { TrajectoryTask } from "./trajectory-task.tsx";

const runHref = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/**
 * The command that continues a stopped training run, as `deno task train` takes it.
 *
 * @example
 * ```ts
 * resumeCommand("run-1"); // "deno task train --resume run-1"
 * ```
 */
export const resumeCommand = (runId: string) => `deno task train --resume ${runId}`;

/**
 * An evaluation run's protocol in the facts line: what it evaluated, how, on what, with which k.
 *
 * @example
 * ```tsx
 * import type { RunFacts } from "../data/run-details.ts";
 * declare const facts: RunFacts; // of an evaluation run
 * facts.protocol && <EvalProtocolFacts protocol={facts.protocol} />;
 * ```
 */
export function EvalProtocolFacts({ protocol: p }: { protocol: EvalProtocol }) {
  return (
    <>
      <div>
        <span>kind</span>evaluation
      </div>
      <div data-protocol={p.protocol}>
        <span>protocol</span>
        {p.protocol}
      </div>
      <div>
        <span>evaluated</span>
        {p.run ? <a href={runHref(p.run)}>{p.model}</a> : p.model}
      </div>
      <div>
        <span>benchmarks</span>
        {p.benchmarks.length > 0 ? p.benchmarks.join(", ") : "—"}
      </div>
      <div>
        <span>k (samples per problem)</span>
        {p.k ?? "—"}
      </div>
    </>
  );
}

/**
 * What became of a run that is not simply running or completed: a failed run's error and an
 * interrupted run's state (stopped with Ctrl-C, or its writer died), each with the command that
 * continues it when it is a training run.
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { runFacts } from "../data/run-details.ts";
 * import type { RunRow } from "../data/runs-list.ts";
 * declare const analysis: Analysis;
 * declare const run: RunRow;
 * <RunStateNotice run={run} facts={await runFacts(analysis.db, run.runId)} />
 * ```
 */
export function RunStateNotice({ run, facts }: { run: RunRow; facts: RunFacts }) {
  const resume = facts.protocol ? null : (
    <p>
      Continue it with <code data-resume>{resumeCommand(run.runId)}</code>
    </p>
  );
  if (run.status === "interrupted") {
    // Ctrl-C ends the attempt with the step it stopped before; a writer that died records nothing.
    const stopped = facts.interruption?.failedStep ?? null;
    const how = stopped === null
      ? "the process writing this run stopped without ending it" +
        (run.lastStep === null ? ", before its first step" : `, in step ${run.lastStep}`)
      : "stopped with Ctrl-C" +
        (stopped > 0 ? `, after step ${stopped - 1}` : ", before its first step");
    return (
      <div class="notice run-state" data-run-state="interrupted">
        <p>
          <strong>Interrupted:</strong> {how}.
        </p>
        {resume}
      </div>
    );
  }
  const f = facts.failure;
  if (run.status !== "failed" || !f) return null;
  return (
    <div class="notice run-state" data-run-state="failed">
      <p>
        <strong>Failed</strong>
        {f.failedStep === null ? "" : ` at step ${f.failedStep}`}
        {f.failedStage ? ` (${f.failedStage})` : ""}:{" "}
        <code class="run-error">{f.error ?? "no error recorded"}</code>
      </p>
      {resume}
    </div>
  );
}

/**
 * A resumed run's attempts: when each ran and how it ended. Shown only for runs with more than
 * one attempt.
 *
 * @example
 * ```tsx
 * import type { RunFacts } from "../data/run-details.ts";
 * declare const facts: RunFacts;
 * <AttemptsTable attempts={facts.attempts} />
 * ```
 */
export function AttemptsTable({ attempts }: { attempts: readonly RunAttempt[] }) {
  if (attempts.length < 2) return null;
  return (
    <>
      <h2>Attempts</h2>
      <table class="attempts">
        <thead>
          <tr>
            <th>attempt</th>
            <th>status</th>
            <th>started (UTC)</th>
            <th>ended (UTC)</th>
            <th>failed at step</th>
            <th>error</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={a.attempt} data-attempt={a.attempt} data-status={a.status}>
              <td class="num">{a.attempt}</td>
              <td>
                <span class={`status ${a.status}`}>{a.status}</span>
              </td>
              <td>{a.startedAt ?? "—"}</td>
              <td>{a.endedAt ?? "—"}</td>
              <td class="num">{a.failedStep ?? "—"}</td>
              <td>{a.error ? <code>{a.error}</code> : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/**
 * The evaluation table, newest step first.
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { runEvals } from "../data/run-details.ts";
 * declare const analysis: Analysis;
 * <EvalTable evals={await runEvals(analysis.db, "run-1")} />
 * ```
 */
export function EvalTable({ evals }: { evals: readonly EvalRow[] }) {
  if (evals.length === 0) return <p class="muted">No evaluation yet.</p>;
  return (
    <table class="evals">
      <thead>
        <tr>
          <th>step</th>
          <th>benchmark</th>
          <th>problems</th>
          <th>avg@k</th>
          <th>pass@k</th>
        </tr>
      </thead>
      <tbody>
        {evals.map((e) => (
          <tr key={`${e.step}-${e.benchmark}`}>
            <td class="num">{e.step}</td>
            <td>{e.benchmark}</td>
            <td class="num">{e.problems}</td>
            <td class="num" title={`avg@${e.k}`}>{formatNumber(e.avgAtK)}</td>
            <td class="num" title={`pass@${e.k}`}>{formatNumber(e.passAtK)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What a timeline cell's tooltip says of a worker group in one step. */
function placementText(c: PlacementCell): string {
  const at = `step ${c.step} ${c.wg}`;
  if (c.lastMoveStep === null) return `${at}: not placed yet`;
  const where = `${c.onDevice ? "on" : "off"} ${c.device} (${c.bytes} bytes)`;
  if (c.loads + c.offloads > 0) {
    return `${at}: loaded ${c.loads}×, offloaded ${c.offloads}×; ${where} at the step's end`;
  }
  const since = `${c.onDevice ? "loaded" : "offloaded"} in step ${c.lastMoveStep}`;
  return `${at}: not moved, ${where} all step (${since})`;
}

/**
 * Worker-group placements as lanes over the run's steps: a filled cell when the group was on the
 * device at the step's end, outlined when it was moved within the step; its loads, offloads and
 * device in the tooltip. A step without a move (the trainer records moves only) shows the state
 * of the group's last move, so a run that never offloads is on the device in every step.
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { recentPlacements } from "../data/run-details.ts";
 * declare const analysis: Analysis;
 * <PlacementTimeline cells={await recentPlacements(analysis.db, "run-1", 40)} />
 * ```
 */
export function PlacementTimeline({ cells }: { cells: readonly PlacementCell[] }) {
  if (cells.length === 0) return <p class="muted">No worker-group placements recorded.</p>;
  const wgs = [...new Set(cells.map((c) => c.wg))].sort();
  const steps = [...new Set(cells.map((c) => c.step))].sort((a, b) => a - b);
  const cellW = Math.max(8, Math.min(32, Math.floor(1000 / steps.length)));
  const left = 110, laneH = 26;
  const width = left + Math.max(steps.length * cellW, 120) + 10;
  const height = wgs.length * laneH + 24;
  const at = new Map(cells.map((c) => [`${c.wg}\u0000${c.step}`, c]));
  return (
    <svg
      class="timeline"
      width={width}
      height={height}
      role="img"
      aria-label="worker-group load/offload timeline"
    >
      {wgs.map((wg, lane) => (
        <g key={wg}>
          <text x={0} y={lane * laneH + 15}>{wg}</text>
          {steps.map((step, i) => {
            const c = at.get(`${wg}\u0000${step}`)!;
            const moved = c.loads + c.offloads > 0;
            return (
              <rect
                key={step}
                class={`${c.onDevice ? "on" : "off"}${moved ? " moved" : ""}`}
                data-step={step}
                data-wg={wg}
                x={left + i * cellW}
                y={lane * laneH + 3}
                width={cellW - 2}
                height={laneH - 6}
              >
                <title>{placementText(c)}</title>
              </rect>
            );
          })}
        </g>
      ))}
      <text x={left} y={height - 4}>step {steps[0]}</text>
      {steps.length > 1 && (
        <text x={width - 10} y={height - 4} text-anchor="end">
          step {steps[steps.length - 1]}
        </text>
      )}
    </svg>
  );
}

/** The browser's URL for a phase, step, page and filter. */
function browserHref(
  runId: string,
  at: { phase: TrajectoryPhase; step: number | null; page: number; filter: TrajectoryFilter },
): string {
  const q = new URLSearchParams({ phase: at.phase });
  if (at.step !== null) q.set("step", String(at.step));
  if (at.page > 0) q.set("page", String(at.page));
  const f = at.filter;
  if (f.correct !== undefined) q.set("correct", f.correct ? "yes" : "no");
  if (f.agent !== undefined) q.set("agent", f.agent);
  if (f.minReward !== undefined) q.set("reward-min", String(f.minReward));
  if (f.maxReward !== undefined) q.set("reward-max", String(f.maxReward));
  return `${runHref(runId)}?${q}#trajectories`;
}

const PHASE_NAMES: Record<TrajectoryPhase, string> = {
  rollout: "training rollouts",
  eval: "evaluations",
};

/**
 * One page of a step's trajectories of one phase (training rollouts, or evaluations: in-training
 * validation and an eval run's samples), every turn of every agent with its own reward, its
 * trajectory's beside it, and its advantage; links to the other phase and the neighbouring pages and steps, and a filter form
 * (correct, agent, reward).
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { type TrajectoryQuery, trajectoryPage } from "../data/trajectory-page.ts";
 * declare const analysis: Analysis;
 * declare const q: TrajectoryQuery; // phase, step, page and filter from the URL
 * const page = await trajectoryPage(analysis.db, "run-1", q);
 * <TrajectoryBrowser runId="run-1" evaluation={false} page={page} />
 * ```
 */
export function TrajectoryBrowser(
  { runId, evaluation, page }: { runId: string; evaluation: boolean; page: TrajectoryPage },
) {
  const pages = Math.max(1, Math.ceil(page.total / page.pageSize));
  const at = { phase: page.phase, step: page.step, page: page.page, filter: page.filter };
  const href = (change: Partial<typeof at>) => browserHref(runId, { ...at, page: 0, ...change });
  const i = page.step === null ? -1 : page.steps.indexOf(page.step);
  const [before, after] = [page.steps[i - 1], i < 0 ? undefined : page.steps[i + 1]];
  const f = page.filter;
  const filtered = Object.values(f).some((v) => v !== undefined);
  return (
    <div class="trajectories" data-phase={page.phase}>
      {!evaluation && (
        <p class="toolbar phases">
          {TRAJECTORY_PHASES.map((phase) =>
            phase === page.phase
              ? <strong key={phase}>{PHASE_NAMES[phase]}</strong>
              : (
                <a key={phase} href={href({ phase, step: null, filter: {} })}>
                  {PHASE_NAMES[phase]}
                </a>
              )
          )}
        </p>
      )}
      <form class="toolbar pager" method="get" action={`${runHref(runId)}#trajectories`}>
        <input type="hidden" name="phase" value={page.phase} />
        {before !== undefined && <a href={href({ step: before })}>◀ step {before}</a>}
        <label>
          step{" "}
          <select name="step">
            {page.steps.map((s) => <option key={s} value={s} selected={s === page.step}>{s}
            </option>)}
          </select>
        </label>
        {after !== undefined && <a href={href({ step: after })}>step {after} ▶</a>}
        <label>
          correct{" "}
          <select name="correct">
            <option value="" selected={f.correct === undefined}>any</option>
            <option value="yes" selected={f.correct === true}>yes</option>
            <option value="no" selected={f.correct === false}>no</option>
          </select>
        </label>
        <label>
          agent{" "}
          <select name="agent">
            <option value="" selected={f.agent === undefined}>all</option>
            {page.agents.map((a) => <option key={a} value={a} selected={a === f.agent}>{a}
            </option>)}
          </select>
        </label>
        {page.phase === "rollout" && (
          <>
            <label>
              reward from{" "}
              <input name="reward-min" type="number" step="any" value={f.minReward ?? ""} />
            </label>
            <label>
              to <input name="reward-max" type="number" step="any" value={f.maxReward ?? ""} />
            </label>
          </>
        )}
        <button type="submit">show</button>
        {filtered && <a href={href({ filter: {} })}>clear filter</a>}
      </form>
      {page.missingStep !== null && page.step !== null && (
        <p class="notice">
          Step {page.missingStep} has no {PHASE_NAMES[page.phase]}; showing step {page.step}.
        </p>
      )}
      {page.step === null
        ? (
          <p class="muted empty" data-empty="trajectories">
            No {PHASE_NAMES[page.phase]} yet.
          </p>
        )
        : (
          <p class="toolbar pager">
            {page.page > 0 && <a href={href({ page: page.page - 1 })}>previous page</a>}
            <span data-total={page.total}>
              page {page.page + 1} of {pages} ({page.total}{" "}
              {filtered ? "matching trajectories" : "trajectories"})
            </span>
            {page.page + 1 < pages && <a href={href({ page: page.page + 1 })}>next page</a>}
          </p>
        )}
      {page.step !== null && page.total === 0 && (
        <p class="muted empty" data-empty="filter">
          No trajectory of step {page.step} matches the filter.
        </p>
      )}
      {page.rows.map((t) => (
        <div class="trajectory" key={t.trajectory} data-trajectory={t.trajectory}>
          <h3>
            {t.trajectory} · {t.benchmark ? `${t.benchmark} ` : ""}problem {t.problemId}{" "}
            · final answer {t.finalAnswer ?? "none"}{" "}
            <span class={t.correct ? "ok" : "bad"}>{t.correct ? "✓ correct" : "✗ wrong"}</span>{" "}
            · trajectory reward <span data-reward>{formatNumber(t.reward)}</span>
          </h3>
          <TrajectoryTask question={t.question} gold={t.gold} />
          <table>
            <thead>
              <tr>
                <th>turn</th>
                <th>agent</th>
                <th>worker group</th>
                <th>tokens</th>
                <th>finish</th>
                <th>answer</th>
                <th>mean logprob</th>
                <th title="this turn's own reward (after any invalid-action penalty)">
                  turn reward
                </th>
                <th title="the whole trajectory's reward, which its turns' rewards derive from">
                  trajectory reward
                </th>
                <th>advantage</th>
                <th>text</th>
              </tr>
            </thead>
            <tbody>
              {t.turns.map((u) => (
                <tr key={u.turn}>
                  <td class="num">{u.turn}</td>
                  <td>{u.agent}</td>
                  <td>{u.wg}</td>
                  <td class="num">{u.responseTokens}</td>
                  <td>{u.finishReason}</td>
                  <td class={u.correct === null ? "" : u.correct ? "ok" : "bad"}>
                    {u.parsedAnswer ?? "—"}
                  </td>
                  <td class="num">{formatNumber(u.meanLogprob)}</td>
                  <td class="num" data-turn-reward>{formatNumber(u.reward)}</td>
                  <td class="num" data-trajectory-reward>{formatNumber(t.reward)}</td>
                  <td class="num">{formatNumber(u.advantage)}</td>
                  <td class="text">{u.text ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}
