/** Checkpoints: each trained worker group's weights and AdamW state, as blobs and events. */
import type { NewEvent } from "../../events/mod.ts";
import type { EventSink } from "./run-log/mod.ts";
import type { GroupPolicy } from "./rollout/mod.ts";
import { sortedGroups } from "./worker-group-placement.ts";

/**
 * Writes every trainable group's weights and optimizer state to the sink's blob store and
 * returns their `checkpoint.saved` events.
 *
 * @example
 * ```ts
 * import { checkpoints } from "./checkpoints.ts";
 * import type { GroupPolicy } from "./rollout/mod.ts";
 * import type { EventSink } from "./run-log/mod.ts";
 *
 * declare const sink: EventSink;
 * declare const groups: ReadonlyMap<string, GroupPolicy>; // each worker group's policy
 * const events = await checkpoints(sink, groups, 3); // one checkpoint.saved per trainable group
 * await sink.append(events);
 * ```
 */
export async function checkpoints(
  sink: EventSink,
  groups: ReadonlyMap<string, GroupPolicy>,
  step: number,
): Promise<NewEvent[]> {
  const events: NewEvent[] = [];
  for (const policy of sortedGroups(groups)) {
    if (policy.trainableParameterCount === 0) continue;
    const bytes = await policy.checkpoint();
    const optimizer = await policy.optimizerCheckpoint();
    events.push({
      type: "checkpoint.saved",
      data: {
        step,
        workerGroup: policy.id,
        blob: await sink.putBlob(bytes),
        bytes: bytes.length,
        parameterHash: await policy.parameterHash(),
        optimizerBlob: optimizer && await sink.putBlob(optimizer),
        format: "safetensors",
      },
    });
  }
  return events;
}
