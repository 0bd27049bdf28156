/**
 * Progress of long work: an updating status line on a terminal (steps, rate, ETA), plain log
 * lines otherwise, so that CI logs and files stay readable.
 */

/**
 * A rate and the time left, when the caller knows better than units over time (a training run,
 * whose evaluations are not steps). `etaDetail` says what the ETA is made of.
 */
export interface ProgressEstimate {
  readonly rate: number;
  readonly etaSeconds: number;
  readonly etaDetail?: string;
}

/** Reports `done` of `total` units with a stage label and metrics. */
export interface ProgressReporter {
  update(
    done: number,
    total: number,
    stage: string,
    metrics?: Readonly<Record<string, number>>,
    estimate?: ProgressEstimate,
  ): void;
  /**
   * Clears the in-place line on a terminal, so that a line printed next (a new run's id) starts
   * at the left edge instead of after the ETA; the next update draws the status again.
   */
  clearLine(): void;
  finish(): void;
}

/** Seconds as `42s`, `3m05s` or `1h02m`; `?` when unknown. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return "?";
  const s = Math.round(seconds);
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`
    : s >= 60
    ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
    : `${s}s`;
}

function formatMetrics(metrics: Readonly<Record<string, number>> = {}): string {
  return Object.entries(metrics).map(([k, v]) => `${k}=${Number(v.toFixed(4))}`).join(" ");
}

/**
 * A reporter writing to stderr: in place on a terminal, one line per finished unit otherwise.
 * Write errors are dropped, and end the reporting. `unit` names what `done` counts in the rate.
 * The rate counts from the first update, so that start-up (loading a model, compiling graphs)
 * is in the elapsed time but not in the rate or the ETA.
 *
 * @example
 * ```ts
 * import { progressReporter } from "./progress.ts";
 *
 * const progress = progressReporter("train");
 * progress.update(3, 10, "rollout");
 * // on a terminal: train 3/10 [rollout] 0.000 steps/s elapsed 0s ETA ?
 * ```
 */
export function progressReporter(
  label: string,
  isTerminal = Deno.stderr.isTerminal(),
  unit = "steps",
): ProgressReporter {
  const started = performance.now();
  let first: { at: number; done: number } | undefined;
  const encoder = new TextEncoder();
  let lastDone = -1;
  // Reporting must never stop the work reported on: after a failed write (a closed pipe, as in
  // `train 2>&1 | head`), the reporter stays silent.
  let writable = true;
  const write = (text: string) => {
    if (!writable) return;
    try {
      Deno.stderr.writeSync(encoder.encode(text));
    } catch {
      writable = false;
    }
  };
  return {
    update(done, total, stage, metrics, estimate) {
      const now = performance.now();
      first ??= { at: now, done };
      const rate = estimate?.rate ??
        (done - first.done) / Math.max((now - first.at) / 1000, 1e-9);
      const eta = estimate?.etaSeconds ??
        (done === total ? 0 : rate > 0 ? (total - done) / rate : Infinity);
      const detail = estimate?.etaDetail ? ` (${estimate.etaDetail})` : "";
      const line = `${label} ${done}/${total} [${stage}] ${rate.toFixed(3)} ${unit}/s ` +
        `elapsed ${formatDuration((now - started) / 1000)} ETA ${formatDuration(eta)}${detail} ` +
        formatMetrics(metrics);
      const shown = line.trimEnd();
      if (isTerminal) write(`\r\x1b[2K${shown}`);
      else if (done !== lastDone && metrics) {
        write(`${shown}\n`);
        lastDone = done;
      }
    },
    clearLine() {
      if (isTerminal) write("\r\x1b[2K");
    },
    finish() {
      if (isTerminal) write("\n");
    },
  };
}
