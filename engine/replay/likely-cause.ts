/**
 * Why a replay diverged, most likely first: an altered log (found by the store's check or by the
 * replay itself, see log-alteration.ts), then a runtime that computes differently (execution
 * provider, thread count, onnxruntime), then different code, then the rest of the runtime. With
 * nothing different the engine itself is nondeterministic.
 */
import { NUMERIC_RUNTIME_FIELDS, type RuntimeDifference } from "../trainer/runtime-record.ts";
import { alterationText, type LogAlteration } from "./log-alteration.ts";

/** What replay knows about the two executions. */
export interface CauseEvidence {
  readonly runId: string;
  /** what the store's check or the replay found altered in the log */
  readonly alteration: LogAlteration | null;
  readonly runtime: readonly RuntimeDifference[];
  readonly recordedCode: string;
  readonly currentCode: string;
}

const LABEL: Readonly<Record<string, string>> = {
  executionProvider: "execution provider",
  threads: "thread count",
  onnxruntime: "onnxruntime version",
  arch: "CPU architecture",
};

/**
 * Likely causes of a divergence, most likely first.
 *
 * @example
 * likelyCauses({ runId, alteration: null, runtime: diffs, recordedCode: "abc",
 *   currentCode: "abc" });
 * // ["different execution provider: recorded cpu, now wasm"]
 */
export function likelyCauses(evidence: CauseEvidence): string[] {
  const { runId, alteration, runtime, recordedCode, currentCode } = evidence;
  const causes: string[] = [];
  if (alteration) causes.push(alterationText(alteration, runId));
  for (const d of runtime.filter((d) => NUMERIC_RUNTIME_FIELDS.includes(d.field))) {
    causes.push(`different ${LABEL[d.field] ?? d.field}: recorded ${d.recorded}, now ${d.current}`);
  }
  if (recordedCode !== currentCode) {
    causes.push(`different code version: recorded ${recordedCode}, now ${currentCode}`);
  } else if (/-dirty$|^unknown$/.test(currentCode)) {
    causes.push(
      `code may differ: version ${currentCode} does not pin the source (uncommitted changes)`,
    );
  }
  for (const d of runtime.filter((d) => !NUMERIC_RUNTIME_FIELDS.includes(d.field))) {
    causes.push(`different ${d.field}: recorded ${d.recorded}, now ${d.current}`);
  }
  if (causes.length === 0) {
    causes.push(
      "same runtime and code: a computation not keyed by its coordinates (engine nondeterminism)",
    );
  }
  return causes;
}
