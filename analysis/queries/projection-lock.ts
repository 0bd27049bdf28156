import { LOCK_FILE } from "./generation-files.ts";

/**
 * Runs `fn` holding the exclusive lock of a projections folder, so two processes (or two
 * dashboards in one process: each opens the file anew) never build a generation at once. The
 * lock is an OS file lock (flock): it is released when the file closes, and by the kernel when
 * the holder dies, so a crashed projector never leaves the folder locked.
 *
 * @example
 * ```ts
 * await withProjectionLock(".polyrl/events.analysis", async () => {
 *   // list, build and rename a generation: no other process does so meanwhile
 * });
 * ```
 */
export async function withProjectionLock<T>(folder: string, fn: () => Promise<T>): Promise<T> {
  const file = await Deno.open(`${folder}/${LOCK_FILE}`, { write: true, create: true });
  try {
    await file.lock(true);
    return await fn();
  } finally {
    file.close();
  }
}
