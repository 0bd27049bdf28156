import { failedRunStatus, type NewEvent, type StoredEvent } from "../../events/mod.ts";
import { agentRoles, flattenConfig } from "./flatten-config.ts";
import type { TableName } from "./schema.ts";

/** One row for one base table, values in the table's column order. */
export type TableRow = readonly [TableName, readonly unknown[]];

/** JSON text of a record of floats, keeping NaN and infinities visible (JSON would null them). */
function floatsJson(record: Readonly<Record<string, number>>): string {
  const keys = Object.keys(record).sort();
  return `{${
    keys.map((k) => {
      const v = record[k];
      return `${JSON.stringify(k)}:${Number.isFinite(v) ? JSON.stringify(v) : `"${v}"`}`;
    }).join(",")
  }}`;
}

function meanOf(xs: Float32Array): number | null {
  if (xs.length === 0) return null;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** The leading columns of every per-trajectory table: turn_events, trajectories, rewards. */
function trajectoryKey(
  run: string,
  d: { step: number; phase: string; trajectory: string; prompt: number; sample: number },
): unknown[] {
  return [run, d.step, d.phase, d.trajectory, d.prompt, d.sample];
}

/**
 * The base-table rows one event contributes (none for types the analysis does not model). Pure:
 * rebuilding from the same log gives the same rows.
 *
 * @example
 * ```ts
 * for (const [table, row] of eventRows(storedEvent)) buffers[table].push(row);
 * ```
 */
export function eventRows(e: StoredEvent<NewEvent>): TableRow[] {
  return [["log_events", [e.stream, e.version, e.position, e.recordedAt]], ...typeRows(e)];
}

/** The rows of the tables that model `e`'s type. */
function typeRows(e: StoredEvent<NewEvent>): TableRow[] {
  const run = e.stream;
  switch (e.type) {
    case "run.started": {
      const d = e.data;
      return [
        ["run_started", [
          run,
          e.position,
          e.recordedAt,
          d.seed,
          d.configHash,
          d.codeVersion,
          d.runtime.executionProvider,
          JSON.stringify(d.config),
          JSON.stringify(d.runtime),
        ]],
        ...Object.entries(d.benchmarks ?? {}).sort(([a], [b]) => a < b ? -1 : 1).map((
          [benchmark, b],
        ): TableRow => ["run_benchmarks", [run, benchmark, b.problems, b.sha256]]),
        ...flattenConfig(d.config).map(([k, v]): TableRow => ["run_config", [run, k, v]]),
        ...agentRoles(d.config).map(([a, r]): TableRow => ["agent_roles", [run, a, r]]),
      ];
    }
    case "policy.initialized": {
      const d = e.data;
      return [["worker_groups", [
        run,
        d.workerGroup,
        d.agents.join(","),
        d.model,
        d.source,
        d.parameterCount,
        d.trainableParameterCount,
        d.parameterHash,
      ]]];
    }
    case "worker_group.loaded":
    case "worker_group.offloaded": {
      const d = e.data;
      const action = e.type === "worker_group.loaded" ? "load" : "offload";
      return [["placements", [run, d.step, d.workerGroup, d.seq, action, d.device, d.bytes]]];
    }
    case "step.started": {
      const d = e.data;
      return [
        ["steps", [run, d.step, d.groupSize, d.prompts.length, e.position, e.recordedAt]],
        ...d.prompts.map((p): TableRow => ["step_prompts", [run, d.step, p.prompt, p.problemId]]),
      ];
    }
    case "turn.generated": {
      const d = e.data;
      return [["turn_events", [
        ...trajectoryKey(run, d),
        d.turn,
        d.agent,
        d.role,
        d.workerGroup,
        d.promptTokens.length,
        d.responseTokens.length,
        d.finishReason,
        d.parsedAnswer,
        d.correct,
        meanOf(d.logprobs),
        e.position,
        d.text,
      ]]];
    }
    case "trajectory.completed": {
      const d = e.data;
      return [["trajectories", [
        ...trajectoryKey(run, d),
        d.problemId,
        d.turns,
        d.agents.join(","),
        d.finalAnswer,
        d.correct,
        d.tokens,
        d.terminationReason,
        d.question,
        d.gold,
      ]]];
    }
    case "reward.assigned": {
      const d = e.data;
      return [["rewards", [
        ...trajectoryKey(run, d),
        d.agent,
        d.total,
        floatsJson(d.components),
      ]]];
    }
    case "advantages.computed": {
      const d = e.data;
      const g = d.baseline.global;
      const b = d.baseline.batch;
      return [
        ["advantage_groups", [
          run,
          d.step,
          d.prompt,
          d.estimator,
          d.scope,
          d.sigmaConvention,
          d.eps,
          b?.mu ?? null,
          b?.sigma ?? null,
          b?.n ?? null,
        ]],
        ["baselines", [run, d.step, d.prompt, null, g.mu, g.sigma, g.n, null]],
        ...Object.entries(d.baseline.perAgent).sort(([a], [b]) => a < b ? -1 : 1).map((
          [agent, s],
        ): TableRow => [
          "baselines",
          [run, d.step, d.prompt, agent, s.mu, s.sigma, s.n, s.multiplier],
        ]),
        ...d.advantages.map((a): TableRow => [
          "advantage_rows",
          [
            run,
            d.step,
            d.prompt,
            a.trajectory,
            a.sample,
            a.agent,
            a.turn,
            a.advantage,
            a.reward,
            a.score,
          ],
        ]),
      ];
    }
    case "gradient_step.applied": {
      const d = e.data;
      return [
        ["grad_steps", [
          run,
          d.step,
          d.workerGroup,
          d.update,
          d.epoch,
          d.miniBatch,
          d.agents.join(","),
          d.losses.total ?? null,
          floatsJson(d.losses),
          d.gradNormBeforeClip,
          d.gradNormAfterClip,
          floatsJson(d.agentGradNorms),
          d.clipFraction,
          d.kl,
          d.entropy,
          d.lr,
          d.clipLow,
          d.clipHigh,
          d.temperature,
          d.loraDropout,
          d.oldLogprobs,
          d.oldLogprobDrift,
          d.tokens,
          d.skippedNonFinite,
          d.parameterHash,
          d.maxRatio ?? null,
          d.dualClipFraction ?? null,
          d.klClampFraction ?? null,
        ]],
        ...(d.rows ?? []).map((r): TableRow => [
          "grad_step_rows",
          [run, d.step, d.workerGroup, d.update, d.epoch, d.miniBatch, r.prompt, r.sample, r.turn],
        ]),
      ];
    }
    case "checkpoint.saved": {
      const d = e.data;
      return [["checkpoints", [
        run,
        d.step,
        d.workerGroup,
        d.blob,
        d.bytes,
        d.parameterHash,
        d.optimizerBlob,
        d.format,
      ]]];
    }
    case "evaluation.completed": {
      const d = e.data;
      return [
        ...d.problems.map((p): TableRow => [
          "evals",
          [run, d.step, d.benchmark, p.problemId, p.n, p.c, d.samplesPerProblem],
        ]),
        ...Object.entries(d.metrics).sort(([a], [b]) => a < b ? -1 : 1).map((
          [metric, value],
        ): TableRow => ["eval_metrics", [run, d.step, d.benchmark, metric, value]]),
      ];
    }
    case "run.completed": {
      const d = e.data;
      return [["run_ended", [
        run,
        e.position,
        e.version,
        e.recordedAt,
        "completed",
        d.steps,
        floatsJson(d.metrics),
        null,
        null,
        null,
      ]]];
    }
    case "run.failed": {
      const d = e.data;
      return [["run_ended", [
        run,
        e.position,
        e.version,
        e.recordedAt,
        failedRunStatus(d),
        null,
        null,
        d.step,
        d.stage,
        `${d.error.name}: ${d.error.message}`,
      ]]];
    }
    case "run.tagged":
    case "run.untagged":
    case "run.hidden":
    case "run.unhidden":
      return [["run_annotations", [
        e.data.runId,
        e.position,
        e.recordedAt,
        e.type.slice("run.".length),
        "tag" in e.data ? e.data.tag : null,
      ]]];
  }
}
