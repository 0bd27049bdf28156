import { useEffect, useState } from "preact/hooks";
// The stats entry point, not analysis/mod.ts: a browser bundle cannot take DuckDB's node binding.
import { gradientSpikes, SPIKE_MULTIPLE } from "../../analysis/stats/mod.ts";
import { applyUpdate, type ChartData, type ChartUpdate } from "../components/chart-data.ts";
import { ChartGrid } from "../components/chart-grid.tsx";
import { fromWire } from "../components/wire-json.ts";
import type { RunCharts } from "../data/run-charts.ts";
import { CHARTS, markerLabel } from "../data/chart-names.ts";
import type { LiveMessage } from "../data/live-updates.ts";

/** Props of the Run page's live charts. */
export interface RunLiveProps {
  readonly runId: string;
  /** last log position the rendered charts include; the live feed starts after it */
  readonly position: number;
  readonly status: string;
  /** finished steps when the page was drawn */
  readonly stepsDone: number;
  /** the steps the run was asked for; null where its config has none */
  readonly steps: number | null;
  readonly charts: RunCharts;
}

/** The charts in page order, each with what its place says while it has no point yet. */
const ORDER: readonly (readonly [string, string])[] = [
  [CHARTS.reward, "no rollouts yet"],
  [CHARTS.accuracy, "no graded rollouts yet"],
  [CHARTS.evalAccuracy, "no evaluation yet"],
  [CHARTS.gradWg, "no gradient steps yet"],
  [CHARTS.gradAgent, "no gradient steps yet"],
  [CHARTS.lemma, "no finite Lemma 4.2 multiplier yet (MADA-RL records none)"],
  [CHARTS.offPolicy, "no off-policy diagnostics (recorded with loss.clip_ratio_c or kl_clamp)"],
  [CHARTS.baselineMu, "no advantages yet"],
  [CHARTS.baselineSigma, "no advantages yet"],
];

/**
 * Marks the live norm `u` a spike if it is one by the analysis rule (`gradientSpikes`) after the
 * line's points before its step: the server's per-update verdict whenever a step has one update
 * (with several, a reload judges each update against the earlier updates themselves).
 */
function markSpike(chart: ChartData, u: ChartUpdate): void {
  const s = chart.series.find((c) => c.label === u.label);
  if (!s) return;
  const earlier = s.y.slice(0, chart.x.indexOf(u.x)).map((v) => v ?? NaN);
  if (!gradientSpikes([...earlier, u.value], SPIKE_MULTIPLE).at(-1)) return;
  applyUpdate(chart, {
    chart: u.chart,
    x: u.x,
    label: markerLabel(u.label, "spike"),
    value: u.value,
    mode: "set",
    marker: "spike",
  });
}

/**
 * Whether the reward chart's line is the accuracy chart's, point for point, as it is when the
 * trajectory reward is the accuracy alone (rewards.weights {accuracy: 1}, MADA-RL): the page says
 * so rather than leave two identical charts to puzzle over.
 */
function rewardIsAccuracy(reward: ChartData | undefined, accuracy: ChartData | undefined) {
  const [r, a] = [reward?.series[0], accuracy?.series[0]];
  if (!reward || !accuracy || !r || !a || reward.x.length !== accuracy.x.length) return false;
  return reward.x.every((x, i) =>
    x === accuracy.x[i] && r.y[i] !== null && a.y[i] !== null && Math.abs(r.y[i]! - a.y[i]!) < 1e-9
  );
}

/**
 * The Run page's charts, following the run live over server-sent events that start right after
 * the rendered log position, so no event is shown twice or missed.
 *
 * @example
 * ```tsx
 * import { Island } from "../components/island.tsx";
 * import type { RunCharts } from "../data/run-charts.ts";
 * import type { RunRow } from "../data/runs-list.ts";
 * declare const run: RunRow;
 * declare const position: number; // the log position the charts were read at
 * declare const charts: RunCharts; // runCharts(analysis.conn, run.runId)
 * const { runId, status, stepsDone, steps } = run;
 * <Island name="run-live" component={RunLive} props={{ runId, position, status, stepsDone, steps, charts }} />
 * ```
 */
export function RunLive(props: RunLiveProps) {
  const [status, setStatus] = useState(props.status);
  const [stepsDone, setStepsDone] = useState(props.stepsDone);
  const [version, setVersion] = useState(0);
  const [received, setReceived] = useState(0);
  useEffect(() => {
    if (props.status !== "running") return;
    const url = `/runs/${encodeURIComponent(props.runId)}/events?from=${props.position + 1}`;
    const source = new EventSource(url);
    let frame = 0;
    source.addEventListener("live", (ev) => {
      const m = fromWire<LiveMessage>((ev as MessageEvent<string>).data);
      for (const u of m.updates) {
        const chart = props.charts[u.chart];
        if (!chart) continue;
        applyUpdate(chart, u);
        if ((u.chart === CHARTS.gradWg || u.chart === CHARTS.gradAgent) && !u.marker) {
          markSpike(chart, u);
        }
      }
      // A step that starts ends the one before it; the run's end, its last.
      if (m.step !== undefined) setStepsDone((s) => Math.max(s, m.step!));
      if (m.status) {
        if (m.status === "completed") setStepsDone((s) => props.steps ?? s + 1);
        setStatus(m.status);
        source.close();
      }
      setReceived((n) => n + 1);
      // Redraw at most once per frame however fast events arrive.
      if (!frame) {
        frame = requestAnimationFrame(() => {
          frame = 0;
          setVersion((v) => v + 1);
        });
      }
    });
    return () => source.close();
  }, []);
  // An evaluation run's page has no charts and no training steps to count.
  const training = Object.keys(props.charts).length > 0;
  // A chart is drawn once it has a point; a live update can move it from the empty ones.
  const present = ORDER.filter(([name]) => props.charts[name]);
  const shown = present.filter(([name]) => props.charts[name].x.length > 0)
    .map(([name]) => ({ name, data: props.charts[name] }));
  const empty = present.filter(([name]) => props.charts[name].x.length === 0);
  return (
    <div class="run-live">
      <p class="live-line">
        <span class={`status ${status}`} data-status={status}>{status}</span>{" "}
        {training && (
          <span data-steps={stepsDone}>
            {props.steps === null ? stepsDone : `${stepsDone} of ${props.steps}`}{" "}
            {props.steps === 1 || (props.steps === null && stepsDone === 1) ? "step" : "steps"} done
          </span>
        )}
        {props.status === "running" && (
          <span class="muted live-count" data-live-events={received}>
            · live: {received} events received
          </span>
        )}
      </p>
      {rewardIsAccuracy(props.charts[CHARTS.reward], props.charts[CHARTS.accuracy]) && (
        <p class="muted chart-note" data-note="reward-is-accuracy">
          Rollout reward and accuracy are equal at every step so far, as they are when a
          trajectory's reward is its final answer's correctness alone (rewards.weights accuracy 1).
          Invalid-action penalties lower single turns' rewards: see the trajectories below.
        </p>
      )}
      {shown.length > 0 && <ChartGrid charts={shown} version={version} />}
      {empty.length > 0 && (
        <div class="chart-grid empty-charts">
          {empty.map(([name, text]) => (
            <figure class="chart" key={name} data-chart={name} data-empty>
              <figcaption>{props.charts[name].title}</figcaption>
              <p class="muted empty">{text}</p>
            </figure>
          ))}
        </div>
      )}
    </div>
  );
}
