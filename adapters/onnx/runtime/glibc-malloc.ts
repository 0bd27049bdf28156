/**
 * Tells glibc's malloc to keep the memory onnxruntime frees for the next run of a session, instead
 * of returning it to the kernel and faulting it in again. The cpu backend runs with onnxruntime's
 * arena off (the arena grew without bound as generation varied shapes), so each run mallocs and
 * frees its tensors. glibc serves a block past its mmap threshold (128 KiB, raised only to the
 * largest block freed so far) with fresh mmap pages and unmaps it on free, and gives back free
 * memory at the heap's top past its trim threshold (twice that), so a run faults in much of what
 * the run before it touched: on this VM a fault costs about 13 us of CPU (docs/PERFORMANCE.md).
 *
 * Two levels. Every cpu process keeps blocks up to 32 MiB (glibc's own ceiling for its moving
 * threshold) and its heap's free top: a 2-step smoke run (batch 4) fell from 309,000-335,000 page
 * faults and 9.3-10.3 CPU s to about 130,000 and 6.9-7.4 s, and 3 steps of the default preset
 * from 47-55 CPU s to 29-30, at the same peak RSS, since blocks past 32 MiB are still mapped
 * anew (docs/PERFORMANCE.md, "A cpu run's freed tensors").
 * Supervised training, one shape step after step, keeps every block up to 1 GiB: its step plans
 * 110 MB in one block (28,000 faults and about 40 ms of kernel time in a 185 ms step before). Not
 * for RL runs: there generation's many block sizes fragment the kept heap, and the default run's
 * peak RSS rose from 1441 to 2341 MiB. Allocation only: results are bit-identical.
 */

/** mallopt parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;
/** Free memory at the top of the heap kept for the next run rather than returned to the kernel. */
const TRIM_THRESHOLD = 2 * 1024 * 1024 * 1024 - 1;

/** Blocks up to this size come from the heap in every cpu process; larger ones are mapped anew. */
export const GENERATION_BLOCKS = 32 * 1024 * 1024;
/** The same for supervised training, whose step's plan is one block of about 110 MB. */
export const TRAIN_STEP_BLOCKS = 1024 * 1024 * 1024;

/** The largest block this process keeps so far; 0 while glibc has its defaults. */
let keptBlocks = 0;

/**
 * Keeps freed blocks up to `largestBlock` bytes (GENERATION_BLOCKS or TRAIN_STEP_BLOCKS) and the
 * heap's free top, once per process and level: a lower level after a higher one changes nothing.
 * False where the thresholds do not apply (not Linux with glibc, or no `--allow-ffi`, in which
 * case malloc keeps its defaults and only speed differs).
 *
 * @example
 * ```ts
 * import { keepFreedTensorMemory, TRAIN_STEP_BLOCKS } from "./glibc-malloc.ts";
 *
 * keepFreedTensorMemory(TRAIN_STEP_BLOCKS); // before the first step
 * ```
 */
export function keepFreedTensorMemory(largestBlock: number): boolean {
  if (largestBlock <= keptBlocks) return true;
  if (!setThresholds(largestBlock)) return false;
  keptBlocks = largestBlock;
  return true;
}

function setThresholds(largestBlock: number): boolean {
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
    return libc.symbols.mallopt(M_MMAP_THRESHOLD, largestBlock) === 1 &&
      libc.symbols.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) === 1;
  } finally {
    libc.close();
  }
}
