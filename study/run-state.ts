/**
 * Where a planned run stands in the store, read from the head of its stream: not started, finished
 * (its last event is `run.completed`), or started and stopped (killed, interrupted or failed),
 * which `deno task train --resume` continues.
 */
import type { EventStore, StreamHead } from "../events/mod.ts";

/** A run's state in the store; `head` is the stream's head when it has events. */
export type RunState =
  | { readonly kind: "absent" }
  | { readonly kind: "complete"; readonly head: StreamHead }
  | { readonly kind: "incomplete"; readonly head: StreamHead; readonly lastEvent: string };

/**
 * The state of each of `runIds` in `store` (one query for the heads, one read per existing run).
 *
 * @example
 * ```ts
 * import { openStore } from "../events/mod.ts";
 * import type { PlannedRun } from "./mod.ts";
 * declare const plan: readonly PlannedRun[];
 * await using store = await openStore(".polyrl/study.sqlite", { readOnly: true });
 * const states = await runStates(store, plan.map((r) => r.runId));
 * states.get("refine-grpo-s0-3f2a9c1d")?.kind; // "complete"
 * ```
 */
export async function runStates(
  store: EventStore,
  runIds: readonly string[],
): Promise<Map<string, RunState>> {
  const heads = new Map((await store.streams()).map((h) => [h.stream, h]));
  const out = new Map<string, RunState>();
  for (const runId of runIds) {
    const head = heads.get(runId);
    if (!head) {
      out.set(runId, { kind: "absent" });
      continue;
    }
    let lastEvent = "";
    for await (const e of store.readStream(runId, { fromVersion: head.version })) {
      lastEvent = e.type;
    }
    out.set(
      runId,
      lastEvent === "run.completed"
        ? { kind: "complete", head }
        : { kind: "incomplete", head, lastEvent },
    );
  }
  return out;
}
