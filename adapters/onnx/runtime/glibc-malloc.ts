/**
 * Tells glibc's malloc to keep freed tensor memory for reuse, for processes that run one graph
 * step after step (supervised training). onnxruntime plans each session's intermediate tensors
 * into one block per run (its memory pattern), and the cpu backend runs with its arena off (the
 * arena grew without bound as generation varied shapes), so every run mallocs and frees that
 * block: 110 MB for the embedded model's 8 x 128 train step. glibc serves a block that large with
 * fresh mmap pages (past 128 KiB, raised only to the largest block freed so far and never past
 * 32 MiB) and unmaps it on free, so each step faulted its activations in anew: 28,000 page faults
 * and about 40 ms of kernel time in a 185 ms step (`/usr/bin/time -v`, docs/PERFORMANCE.md). With
 * blocks up to 1 GiB taken from the heap and its free top kept, a step reuses the pages the step
 * before it touched. Not for RL runs, which interleave generation's many shapes with the updates:
 * there the kept blocks fragment the heap, and the default run's peak RSS rose from 1441 to 2341
 * MiB (for CPU time 0.90x). Allocation only: results are bit-identical.
 */

/** mallopt parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;
/** Blocks up to this size come from the heap; a larger run's block is mmapped as before. */
const MMAP_THRESHOLD = 1024 * 1024 * 1024;
/** Free memory at the top of the heap kept for the next run rather than returned to the kernel. */
const TRIM_THRESHOLD = 2 * 1024 * 1024 * 1024 - 1;

let applied: boolean | undefined;

/**
 * Sets the thresholds once per process; false where they do not apply (not Linux with glibc, or
 * no `--allow-ffi`, in which case malloc keeps its defaults and only speed differs).
 *
 * @example
 * ```ts
 * import { keepFreedTensorMemory } from "./glibc-malloc.ts";
 *
 * keepFreedTensorMemory(); // before the first step
 * ```
 */
export function keepFreedTensorMemory(): boolean {
  applied ??= setThresholds();
  return applied;
}

function setThresholds(): boolean {
  if (Deno.build.os !== "linux") return false;
  // Asking first: an ungranted FFI permission would otherwise prompt on a terminal.
  if (Deno.permissions.querySync({ name: "ffi" }).state !== "granted") return false;
  let libc;
  try {
    libc = Deno.dlopen("libc.so.6", { mallopt: { parameters: ["i32", "i32"], result: "i32" } });
  } catch {
    return false; // not glibc (musl has no libc.so.6, and no mallopt)
  }
  try {
    // mallopt returns 1 on success.
    return libc.symbols.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) === 1 &&
      libc.symbols.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) === 1;
  } finally {
    libc.close();
  }
}
