import { failedRunStatus, type NewEvent, type StoredEvent } from "../../events/mod.ts";
import type { ChartUpdate } from "../components/chart-data.ts";
import { CHARTS, GLOBAL, markerLabel, offPolicyLabel } from "./chart-names.ts";
import { evalAccuracyUpdates } from "./eval-accuracy-updates.ts";

/** What one stored event changes on an open Run page. */
export interface LiveMessage {
  readonly kind: "live";
  readonly position: number;
  readonly type: string;
  /** the step the run has reached, when the event starts one */
  readonly step?: number;
  /** the run's new status, when the event ends it */
  readonly status?: "completed" | "failed" | "interrupted";
  readonly updates: readonly ChartUpdate[];
}

/**
 * Turns an event of the run's stream into the chart updates the Run page applies, with the
 * same aggregation as `runCharts` (means per step, markers for non-finite norms), so a page
 * followed live ends up equal to one loaded afresh. Spikes are judged by the page itself.
 *
 * @example
 * ```ts
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * declare const store: EventStore<NewEvent>; // the dashboard's store
 * declare const runId: string; // the run the page shows
 * declare const from: number; // the log position the page was rendered at, plus one
 * declare const send: (message: LiveMessage) => void; // e.g. one server-sent event
 * for await (const e of store.subscribe({ from })) if (e.stream === runId) send(liveMessage(e));
 * ```
 */
export function liveMessage(e: StoredEvent<NewEvent>): LiveMessage {
  const base = { kind: "live" as const, position: e.position, type: e.type };
  switch (e.type) {
    case "step.started":
      return { ...base, step: e.data.step, updates: [] };
    case "run.completed":
      return { ...base, status: "completed", updates: [] };
    case "run.failed":
      return { ...base, status: failedRunStatus(e.data), updates: [] };
    case "reward.assigned":
      if (e.data.phase !== "rollout" || e.data.agent !== null) break;
      return { ...base, updates: [mean(CHARTS.reward, e.data.step, "reward", e.data.total)] };
    case "trajectory.completed":
      if (e.data.phase !== "rollout" || e.data.correct === null) break;
      return {
        ...base,
        updates: [mean(CHARTS.accuracy, e.data.step, "accuracy", e.data.correct ? 1 : 0)],
      };
    case "gradient_step.applied": {
      const d = e.data;
      return {
        ...base,
        updates: [
          ...norm(CHARTS.gradWg, d.step, d.workerGroup, d.gradNormBeforeClip),
          ...Object.entries(d.agentGradNorms).flatMap(([a, v]) =>
            norm(CHARTS.gradAgent, d.step, a, v)
          ),
          ...([
            ["max ratio", d.maxRatio],
            ["dual-clipped", d.dualClipFraction],
            ["KL-clamped", d.klClampFraction],
          ] as const).flatMap(([what, v]) =>
            v === undefined || !Number.isFinite(v)
              ? []
              : [mean(CHARTS.offPolicy, d.step, offPolicyLabel(d.workerGroup, what), v)]
          ),
        ],
      };
    }
    case "evaluation.completed":
      return { ...base, updates: evalAccuracyUpdates(e.data) };
    case "advantages.computed": {
      const { step, baseline } = e.data;
      const stats = [[GLOBAL, baseline.global] as const, ...Object.entries(baseline.perAgent)];
      return {
        ...base,
        updates: [
          ...stats.map(([label, s]) => mean(CHARTS.baselineMu, step, label, s.mu)),
          ...stats.map(([label, s]) => mean(CHARTS.baselineSigma, step, label, s.sigma)),
          // The multiplier the engine recorded, where it recorded one (as runCharts reads it).
          ...Object.entries(baseline.perAgent).flatMap(([agent, s]) =>
            s.multiplier !== null && Number.isFinite(s.multiplier)
              ? [mean(CHARTS.lemma, step, agent, s.multiplier)]
              : []
          ),
        ],
      };
    }
  }
  return { ...base, updates: [] };
}

function mean(chart: string, x: number, label: string, value: number): ChartUpdate {
  return { chart, x, label, value, mode: "mean" };
}

function norm(chart: string, x: number, label: string, value: number): ChartUpdate[] {
  return Number.isFinite(value) ? [mean(chart, x, label, value)] : [{
    chart,
    x,
    label: markerLabel(label, "non-finite"),
    value: 0,
    mode: "set",
    marker: "non-finite",
  }];
}
