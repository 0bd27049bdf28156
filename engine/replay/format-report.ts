/** The text `deno task replay` prints for a replay report. */
import { changedModuleText } from "./likely-cause.ts";
import { alterationText } from "./log-alteration.ts";
import type { DriftStats } from "./numeric-drift.ts";
import type { ReplayReport } from "./replay-run.ts";

const stats = (name: string, s: DriftStats) =>
  `  ${name.padEnd(10)} ${String(s.compared).padStart(7)} compared, max abs ${
    s.maxAbs.toExponential(3)
  }, max rel ${s.maxRel.toExponential(3)}, ${s.outside} outside tolerance`;

/** The line that says where the replay's turns came from. */
const ROLLOUT_LINES: Record<ReplayReport["rollouts"], (backend: string) => string> = {
  sampled: (backend) => `rollouts: sampled in-process, as recorded (rollout backend ${backend})`,
  keyed: (backend) =>
    `rollouts: keyed, re-sampled in-process with the recorded keyed draws and compared token for ` +
    `token with the log (rollout backend ${backend}); a run on servers without keyed draws ` +
    "(vLLM, SGLang) replays with --rollouts recorded",
  recorded: (backend) =>
    `rollouts: recorded, the log's turns taken as given; rewards, advantages and updates ` +
    `re-executed (rollout backend ${backend})`,
};

/**
 * Human-readable lines: the header (backend, runtime, an edited workflow module), the verdict,
 * the first divergence with its differing fields and likely causes (an altered log among them,
 * or on its own line when every compared event matched), and in tolerance mode the drift table.
 *
 * @example
 * ```ts
 * import { formatReplayReport } from "./format-report.ts";
 * import type { ReplayReport } from "./replay-run.ts";
 *
 * declare const report: ReplayReport; // what replayRun returned
 * console.log(formatReplayReport(report).join("\n"));
 * ```
 */
export function formatReplayReport(r: ReplayReport): string[] {
  const lines: string[] = [];
  if (r.mode === "tolerance") {
    lines.push(
      `backend differs from the recording (recorded ${r.backend.recorded}, replaying on ` +
        `${r.backend.current}): low bits will differ, so results are compared with tolerances ` +
        `(max abs/rel of logprobs, losses, grad norms)`,
    );
  }
  if (r.runtimeDifferences.length > 0) {
    lines.push(
      `runtime differs from the recording: ` +
        r.runtimeDifferences.map((d) => `${d.field} ${d.recorded} -> ${d.current}`).join(", "),
    );
  }
  if (r.changedModule) lines.push(changedModuleText(r.changedModule));
  lines.push(ROLLOUT_LINES[r.rollouts](r.rolloutBackend));
  const range = r.steps === 0
    ? "its evaluation of the initial team (a run of 0 steps; step 0 in the log)"
    : `steps ${r.from}..${r.to}`;
  lines.push(
    `replay of ${r.runId} on ${r.backend.current}, ${range}` +
      (r.checkpointStep === null
        ? ""
        : ` (restored the checkpoint of step ${r.checkpointStep}, re-derived from step ${r.startedAt})`) +
      `: ${r.compared} events compared, ${r.identical} identical`,
  );
  const newer = Object.entries(r.newerTypes);
  if (newer.length > 0) {
    lines.push(
      `not compared: ${newer.map(([type, n]) => `${n} ${type}`).join(", ")} (types newer than ` +
        `the code that recorded the run, which never wrote them)`,
    );
  }
  const d = r.firstDivergence;
  if (r.identicalThrough !== null) lines.push(`identical through step ${r.identicalThrough}`);
  if (d) {
    const at = d.version === null ? "(not in the log)" : `#${d.version}`;
    const coords = Object.entries(d.coordinates).map(([k, v]) => `${k}=${v}`).join(" ");
    lines.push(
      `first divergent event ${at} ${d.type} ${coords} id ${d.id}: ${
        d.reason === "different"
          ? "differs from the log"
          : d.reason === "not-logged"
          ? "regenerated but not in the log"
          : "in the log but not regenerated"
      }`,
    );
    if (d.recordedHash || d.replayedHash) {
      lines.push(
        `  hash recorded ${d.recordedHash ?? "-"}, replayed ${d.replayedHash ?? "-"}` +
          (d.loggedDataAltered
            ? " (the replay matches the recorded hash; the logged data no longer does)"
            : ""),
      );
    }
    for (const f of d.fields) {
      lines.push(`  ${f.path}: recorded ${f.recorded}; replayed ${f.replayed}`);
    }
    lines.push("likely cause:", ...r.likelyCauses.map((c) => `  - ${c}`));
  } else if (r.alteration) lines.push(alterationText(r.alteration, r.runId));
  if (r.drift) {
    const t = r.drift.firstTokenDivergence;
    lines.push(
      `numeric drift (tolerance |a - b| <= ${r.drift.atol} + ${r.drift.rtol} * |a|):`,
      stats("logprobs", r.drift.logprobs),
      stats("losses", r.drift.losses),
      stats("gradNorms", r.drift.gradNorms),
      t
        ? `token streams first differ at step ${t.step} ${t.phase} ${t.trajectory} turn ${t.turn} ` +
          `(${t.agent}) token ${t.index}: recorded ${t.recorded}, replayed ${t.replayed}`
        : "token streams identical",
      r.withinTolerance
        ? "within tolerance"
        : `not within tolerance (${r.divergent} events differ)`,
    );
  }
  return lines;
}
