/** Checkpoints: each trained worker group's weights and AdamW state, as blobs and events. */
import type { NewEvent } from "../../events/mod.ts";
import type { EventSink } from "./run-log/mod.ts";
import type { GroupPolicy } from "./rollout/mod.ts";
import { sortedGroups } from "./worker-group-placement.ts";

/**
 * Writes every trainable group's weights and optimizer state to the sink's blob store and
 * returns their `checkpoint.saved` events.
 *
 * @example await append(await checkpoints(sink, pool.groups, step));
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
