/**
 * Progress of long work: an updating status line on a terminal (steps, rate, ETA), plain log
 * lines otherwise, so that CI logs and files stay readable.
 */

/** Reports `done` of `total` units with a stage label and metrics. */
export interface ProgressReporter {
  update(
    done: number,
    total: number,
    stage: string,
    metrics?: Readonly<Record<string, number>>,
  ): void;
  /**
   * Clears the in-place line on a terminal, so that a line printed next (a new run's id) starts
   * at the left edge instead of after the ETA; the next update draws the status again.
   */
  clearLine(): void;
  finish(): void;
}

function formatDuration(seconds: number): string {
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
 *
 * @example
 * const progress = progressReporter("train");
 * progress.update(3, 10, "rollout");
 */
export function progressReporter(
  label: string,
  isTerminal = Deno.stderr.isTerminal(),
  unit = "steps",
): ProgressReporter {
  const started = performance.now();
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
    update(done, total, stage, metrics) {
      const elapsed = (performance.now() - started) / 1000;
      const rate = done / Math.max(elapsed, 1e-9);
      const eta = done > 0 ? (total - done) / rate : Infinity;
      const line = `${label} ${done}/${total} [${stage}] ${rate.toFixed(3)} ${unit}/s ` +
        `elapsed ${formatDuration(elapsed)} ETA ${formatDuration(eta)} ${formatMetrics(metrics)}`
          .trimEnd();
      if (isTerminal) write(`\r\x1b[2K${line}`);
      else if (done !== lastDone && metrics) {
        write(`${line}\n`);
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
