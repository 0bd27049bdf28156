/**
 * Grades items in a child process with a real per-item time limit: an item that runs past the
 * limit is reported as not equivalent with reason `timeout`, the child is killed (SIGKILL) and a
 * fresh one takes the next item, so one pathological expression cannot hang a batch.
 *
 * Why a process and not a Worker: in Deno 2.9, `Worker.terminate()` does not stop a worker busy
 * in a JS loop; the thread keeps a core busy and the process never exits (denoland/deno#35657).
 *
 * @example
 * ```ts
 * import { DEFAULT_GRADE_OPTIONS } from "./options.ts";
 * const runner = new GradeRunner({ timeoutMs: 2000 });
 * const r = await runner.grade("$1/2$", "0.5", DEFAULT_GRADE_OPTIONS);
 * await runner.close();
 * ```
 */
import { fileURLToPath } from "node:url";
import type { GradeResult } from "./grade.ts";
import type { GradeOptions } from "./options.ts";

/** The reason string of a result cut off by the time limit. */
export const TIMEOUT_REASON = "timeout";

/** Runner settings. */
export interface GradeRunnerOptions {
  /** Wall-clock limit for one item, milliseconds (child start-up is not counted). */
  readonly timeoutMs: number;
}

interface Reply {
  readonly id: number;
  readonly result?: GradeResult;
  readonly error?: string;
}

const CHILD = fileURLToPath(new URL("./grade-child.ts", import.meta.url));

/** A result produced when an item timed out: nothing was extracted in time. */
function timedOut(): GradeResult {
  const none = Object.freeze({ extracted: null, source: null, parsed: null });
  return Object.freeze({ equivalent: false, gold: none, pred: none, reason: TIMEOUT_REASON });
}

/** One running child with a line reader over its stdout. */
class Child {
  readonly process: Deno.ChildProcess;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;
  private readonly lines: AsyncIterator<string>;

  constructor() {
    this.process = new Deno.Command(Deno.execPath(), {
      args: ["run", "--quiet", "--no-prompt", "--no-lock", CHILD],
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.writer = this.process.stdin.getWriter();
    this.lines = readLines(this.process.stdout)[Symbol.asyncIterator]();
  }

  async send(request: unknown): Promise<void> {
    await this.writer.write(new TextEncoder().encode(JSON.stringify(request) + "\n"));
  }

  /** Resolves once the child has loaded the grader, so start-up never counts as item time. */
  async ready(): Promise<void> {
    const hello = await this.receive();
    if (hello.id !== -1) {
      throw new Error(`grading child sent ${JSON.stringify(hello)} before ready`);
    }
  }

  async receive(): Promise<Reply> {
    const next = await this.lines.next();
    if (next.done) throw new Error("grading child exited unexpectedly");
    return JSON.parse(next.value) as Reply;
  }

  async kill(): Promise<void> {
    try {
      this.process.kill("SIGKILL");
    } catch {
      // Already exited.
    }
    await this.writer.close().catch(() => {});
    await this.lines.return?.();
    await this.process.status;
  }

  async close(): Promise<void> {
    await this.writer.close().catch(() => {});
    await this.lines.return?.();
    await this.process.status;
  }
}

async function* readLines(stream: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<string> {
  let buffered = "";
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffered += value;
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        yield buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** One grading child, replaced whenever an item times out. Grade items one at a time. */
export class GradeRunner {
  private child: Child | null = null;
  private nextId = 0;

  constructor(private readonly options: GradeRunnerOptions) {
    if (!(options.timeoutMs > 0)) {
      throw new RangeError(
        `timeoutMs must be a positive number of milliseconds, got ${options.timeoutMs}`,
      );
    }
  }

  /** Grades one pair; resolves with `reason: "timeout"` when the limit passes first. */
  async grade(gold: string, pred: string, options: GradeOptions): Promise<GradeResult> {
    if (!this.child) {
      this.child = new Child();
      await this.child.ready();
    }
    const child = this.child;
    const id = this.nextId++;
    await child.send({ id, gold, pred, options });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.options.timeoutMs);
    });
    try {
      const reply = await Promise.race([child.receive(), timeout]);
      if (reply === null) {
        this.child = null;
        await child.kill();
        return timedOut();
      }
      if (reply.id !== id || !reply.result) {
        throw new Error(`grading failed: ${reply.error ?? `reply ${reply.id} for request ${id}`}`);
      }
      return reply.result;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the child (call when done). */
  async close(): Promise<void> {
    const child = this.child;
    this.child = null;
    await child?.close();
  }
}
