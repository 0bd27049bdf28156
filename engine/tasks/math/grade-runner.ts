/**
 * Grades items in a Worker with a real per-item time limit: an item that runs past the limit is
 * reported as not equivalent with reason `timeout`, the worker is terminated and a fresh one
 * takes the next item, so one pathological expression cannot hang a batch.
 *
 * @example
 * ```ts
 * const runner = new GradeRunner({ timeoutMs: 2000 });
 * const r = await runner.grade("$1/2$", "0.5", DEFAULT_GRADE_OPTIONS);
 * runner.close();
 * ```
 */
import type { GradeResult } from "./grade.ts";
import type { GradeOptions } from "./options.ts";

/** The reason string of a result cut off by the time limit. */
export const TIMEOUT_REASON = "timeout";

/** Runner settings. */
export interface GradeRunnerOptions {
  /** Wall-clock limit for one item, milliseconds. */
  readonly timeoutMs: number;
}

interface Reply {
  readonly id: number;
  readonly result?: GradeResult;
  readonly error?: string;
}

/** A result produced when an item timed out: nothing was extracted in time. */
function timedOut(): GradeResult {
  const none = Object.freeze({ extracted: null, source: null, parsed: null });
  return Object.freeze({ equivalent: false, gold: none, pred: none, reason: TIMEOUT_REASON });
}

/** One grading worker, replaced whenever an item times out. Grade items one at a time. */
export class GradeRunner {
  private worker: Worker | null = null;
  private nextId = 0;

  constructor(private readonly options: GradeRunnerOptions) {
    if (!(options.timeoutMs > 0)) {
      throw new RangeError(
        `timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}`,
      );
    }
  }

  private spawn(): Worker {
    this.worker ??= new Worker(new URL("./grade-worker.ts", import.meta.url).href, {
      type: "module",
    });
    return this.worker;
  }

  /** Grades one pair; resolves with `reason: "timeout"` when the limit passes first. */
  grade(gold: string, pred: string, options: GradeOptions): Promise<GradeResult> {
    const worker = this.spawn();
    const id = this.nextId++;
    return new Promise<GradeResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        worker.onmessage = null;
        worker.terminate();
        this.worker = null;
        resolve(timedOut());
      }, this.options.timeoutMs);
      worker.onmessage = (event: MessageEvent<Reply>) => {
        if (event.data.id !== id) return;
        clearTimeout(timer);
        worker.onmessage = null;
        if (event.data.result) resolve(event.data.result);
        else reject(new Error(`grading failed: ${event.data.error}`));
      };
      worker.onerror = (event) => {
        clearTimeout(timer);
        event.preventDefault();
        this.worker?.terminate();
        this.worker = null;
        reject(new Error(`grading worker crashed: ${event.message}`));
      };
      worker.postMessage({ id, gold, pred, options });
    });
  }

  /** Terminates the worker (call when done, or the process stays alive). */
  close(): void {
    this.worker?.terminate();
    this.worker = null;
  }
}
