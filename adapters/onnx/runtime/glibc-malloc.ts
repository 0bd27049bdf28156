/**
 * Tells glibc's malloc to keep the memory onnxruntime frees for the next run of a session, instead
 * of returning it to the kernel and faulting it in again. The cpu backend runs with onnxruntime's
 * arena off (the arena grew without bound as generation varied shapes), so each run mallocs and
 * frees its tensors. glibc serves a block past its mmap threshold (128 KiB, raised only to the
 * largest block freed so far) with fresh mmap pages and unmaps it on free, and gives back free
 * memory at the heap's top past its trim threshold (twice that), so a run faults in much of what
 * the run before it touched: on this VM a fault costs about 13 us of CPU (docs/PERFORMANCE.md).
 *
 * Every cpu process keeps blocks up to 32 MiB (glibc's own ceiling for its moving threshold) and
 * its heap's free top: a 2-step smoke run (batch 4) fell from 309,000-335,000 page faults and
 * 9.3-10.3 CPU s to about 130,000 and 6.9-7.4 s, and 3 steps of the default preset from 47-55 CPU
 * s to 29-30, at the same peak RSS, since blocks past 32 MiB are still mapped anew
 * (docs/PERFORMANCE.md, "A cpu run's freed tensors"). Keeping larger blocks fragmented the heap
 * under generation's many block sizes (the default run's peak RSS rose from 1441 to 2341 MiB with
 * 1 GiB); a session run at one shape keeps its one large block in onnxruntime's arena instead
 * (SessionOptions.fixedShape). Allocation only: results are bit-identical.
 *
 * What is still mapped anew faults less under deno.json's tasks, which start Deno with
 * GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc asks for transparent huge pages, 2 MiB a fault): the
 * default preset's 3 steps from 451,000 faults and 24.4 CPU s to 38,000 and 22.0-22.8 s.
 */

/** mallopt parameters (malloc.h). */
const M_TRIM_THRESHOLD = -1;
const M_MMAP_THRESHOLD = -3;
/** Free memory at the top of the heap kept for the next run rather than returned to the kernel. */
const TRIM_THRESHOLD = 2 * 1024 * 1024 * 1024 - 1;

/** Blocks up to this size come from the heap; larger ones are mapped anew. */
const KEPT_BLOCKS = 32 * 1024 * 1024;

/** Whether this process keeps them already. */
let kept = false;

/**
 * Keeps freed blocks up to 32 MiB and the heap's free top, once per process. False where the
 * thresholds do not apply (not Linux with glibc, or no `--allow-ffi`, in which case malloc keeps
 * its defaults and only speed differs).
 *
 * @example
 * ```ts
 * import { keepFreedTensorMemory } from "./glibc-malloc.ts";
 *
 * keepFreedTensorMemory(); // when the cpu backend opens
 * ```
 */
export function keepFreedTensorMemory(): boolean {
  if (!kept) kept = setThresholds();
  return kept;
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
    return libc.symbols.mallopt(M_MMAP_THRESHOLD, KEPT_BLOCKS) === 1 &&
      libc.symbols.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) === 1;
  } finally {
    libc.close();
  }
}
