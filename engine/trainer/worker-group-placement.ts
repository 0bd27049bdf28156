/**
 * Dr. MAS offload/resume: with `runtime.offload_idle`, each worker group is on the device only for
 * its own update, and every move is an event for the dashboard's timeline.
 */
import type { NewEvent } from "../../events/mod.ts";
import type { GroupPolicy } from "./rollout/mod.ts";

/** Offloads and loads worker groups, recording each move that happened into `events`. */
export function placementRecorder(step: number, device: string, events: NewEvent[]) {
  // seq 0 of step 0 is the initial load.
  const seq = new Map<string, number>();
  const record = (
    type: "worker_group.loaded" | "worker_group.offloaded",
    wg: string,
    bytes: number,
  ) => {
    if (bytes === 0) return;
    const next = (seq.get(wg) ?? 0) + 1;
    seq.set(wg, next);
    events.push({ type, data: { step, workerGroup: wg, seq: next, device, bytes } });
  };
  return {
    offload: async (policy: GroupPolicy) =>
      record("worker_group.offloaded", policy.id, await policy.offload()),
    load: (policy: GroupPolicy) => record("worker_group.loaded", policy.id, policy.load()),
  };
}

/** Worker groups in id order: the order of updates, checkpoints and hashes. */
export function sortedGroups(groups: ReadonlyMap<string, GroupPolicy>): GroupPolicy[] {
  return [...groups.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
