/**
 * A recorded training run read back: its events in order and the config it started with, for
 * resume and replay. The config is trusted only when it still hashes to the `configHash` it was
 * logged with. Evaluation runs (deno task eval) are no training runs: they are refused, and
 * `latest` skips them.
 */
import {
  type EventStore,
  hashConfig,
  type NewEvent,
  type RecordedEvent,
  type StoredEvent,
} from "../../../events/mod.ts";
import { type NormalizedConfig, upcastRecordedConfig } from "../../config/mod.ts";

/** A run's log in stream order. */
export interface RunLog {
  readonly kind: "run-log";
  readonly runId: string;
  readonly events: readonly StoredEvent<NewEvent>[];
  readonly started: RecordedEvent<"run.started">;
  readonly config: NormalizedConfig;
}

/** The log cannot be used as a run's record: missing run, no `run.started`, altered config. */
export class RunLogError extends Error {
  override name = "RunLogError";
  constructor(readonly runId: string, message: string) {
    super(message);
  }
}

/**
 * The id of the training run whose stream was written last, for `latest` of replay and resume:
 * evaluation runs (and streams that are no runs) are skipped.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * declare const store: EventStore;
 * const runId = await latestRunId(store); // "smoke-20261202T1630-ab12cd"
 * ```
 */
export async function latestRunId(store: EventStore): Promise<string> {
  const heads = [...await store.streams()].sort((a, b) => b.position - a.position);
  let evaluations = 0;
  for (const head of heads) {
    const started = await firstEvent(store, head.stream);
    if (started?.type !== "run.started") continue;
    if (!isEvaluationConfig(started.data.config)) return head.stream;
    evaluations++;
  }
  throw new RunLogError(
    "latest",
    `store ${store.target} holds no training runs` +
      (evaluations > 0 ? ` (only ${evaluations} evaluation run(s) of deno task eval)` : ""),
  );
}

async function firstEvent(store: EventStore, stream: string): Promise<NewEvent | undefined> {
  for await (const e of store.readStream(stream)) return e as StoredEvent<NewEvent>;
  return undefined;
}

/**
 * Reads `runId`'s stream and checks its `run.started` config against the recorded hash.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * declare const store: EventStore;
 * const log = await readRunLog(store, "run-1");
 * log.config.steps; // as the run was started
 * ```
 */
export async function readRunLog(store: EventStore, runId: string): Promise<RunLog> {
  const events: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) events.push(e as StoredEvent<NewEvent>);
  if (events.length === 0) {
    throw new RunLogError(runId, `run ${runId} has no events in store ${store.target}`);
  }
  const started = events[0];
  if (started.type !== "run.started") {
    throw new RunLogError(runId, `run ${runId} begins with ${started.type}, not run.started`);
  }
  const actual = hashConfig(started.data.config);
  if (actual !== started.data.configHash) {
    throw new RunLogError(
      runId,
      `run ${runId}: the logged config hashes to ${actual} but run.started recorded configHash ` +
        `${started.data.configHash}; the config was altered after the run started`,
    );
  }
  if (isEvaluationConfig(started.data.config)) {
    throw new RunLogError(
      runId,
      `run ${runId} is an evaluation run (deno task eval); replay and train --resume ` +
        `re-execute training runs (its results are in the log: deno task report; to evaluate ` +
        `again, run deno task eval)`,
    );
  }
  const upcast = upcastRecordedConfig(started.data.config);
  if (upcast.kind === "refused") {
    throw new RunLogError(
      runId,
      `run ${runId} cannot be resumed or replayed exactly: ${upcast.reason}; its events stay ` +
        `readable (verify, sql, report, web), and the code that recorded it is its run.started ` +
        `codeVersion`,
    );
  }
  return Object.freeze({
    kind: "run-log",
    runId,
    events,
    started: started as RecordedEvent<"run.started">,
    config: upcast.config,
  });
}

/**
 * Whether a `run.started` config is an evaluation's (it has the `eval` section that
 * `recordedEvalConfig` of engine/evaluation/protocol.ts writes) rather than a training run's.
 *
 * @example
 * ```ts
 * import type { RecordedEvent } from "../../../events/mod.ts";
 * declare const started: RecordedEvent<"run.started">; // a run's first event
 * isEvaluationConfig(started.data.config); // true for a run of deno task eval
 * ```
 */
export function isEvaluationConfig(config: Readonly<Record<string, unknown>>): boolean {
  return config.eval !== null && typeof config.eval === "object";
}
