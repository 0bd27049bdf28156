/**
 * The embedded model a recorded run was trained on, from its `policy.initialized` source, so
 * that replay, `train --resume` and evaluation of its checkpoints load those weights even after
 * the committed model was replaced (adapters/model/embedded-versions.ts).
 */
import { type EmbeddedVersion, recordedEmbeddedVersion } from "../../../adapters/model/mod.ts";
import type { NewEvent, StoredEvent } from "../../../events/mod.ts";

/**
 * The recorded run's embedded model; undefined when no worker group of it used `"embedded"` (or
 * it stopped before recording its initial weights: it then starts from the committed model).
 * Throws an EmbeddedVersionError naming the fix when those weights are no longer committed.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * import { recordedEmbedded } from "./recorded-embedded.ts";
 * import { readRunLog } from "./run-log.ts";
 *
 * declare const store: EventStore;
 * const log = await readRunLog(store, "run-1");
 * const embedded = await recordedEmbedded(log.events, log.runId); // undefined: no "embedded" policy
 * ```
 */
export async function recordedEmbedded(
  events: readonly StoredEvent<NewEvent>[],
  runId: string,
): Promise<EmbeddedVersion | undefined> {
  for (const e of events) {
    if (e.type === "policy.initialized" && e.data.model === "embedded") {
      return await recordedEmbeddedVersion(e.data.source, runId);
    }
  }
  return undefined;
}
