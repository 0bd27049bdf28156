/**
 * Why a replay diverged, most likely first: an altered log (found by the store's check or by the
 * replay itself, see log-alteration.ts), then an edited custom workflow module, then a runtime
 * that computes differently (execution provider, thread count, onnxruntime), then different code,
 * then the rest of the runtime. With nothing different the engine itself is nondeterministic.
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
  /** a custom workflow's module, when its source hash differs from the recorded one */
  readonly changedModule?: ChangedModule | null;
}

/** A custom workflow module whose source is not what the run recorded. */
export interface ChangedModule {
  readonly path: string;
  /** the recorded SHA-256; null for a run recorded before modules were hashed */
  readonly recorded: string | null;
  readonly current: string;
}

/**
 * One line naming the changed module.
 *
 * @example
 * ```ts
 * import { changedModuleText } from "./likely-cause.ts";
 *
 * changedModuleText({ path: "/x/flow.ts", recorded: "ab..", current: "cd.." });
 * // "workflow module /x/flow.ts changed since the run: recorded sha256 ab.., now cd.."
 * ```
 */
export function changedModuleText(m: ChangedModule): string {
  return m.recorded === null
    ? `workflow module ${m.path} may have changed: the run recorded no hash of it ` +
      `(now ${m.current})`
    : `workflow module ${m.path} changed since the run: recorded sha256 ${m.recorded}, now ` +
      m.current;
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
 * ```ts
 * import { likelyCauses } from "./likely-cause.ts";
 *
 * likelyCauses({
 *   runId: "run-1",
 *   alteration: null,
 *   runtime: [{ field: "executionProvider", recorded: "cpu", current: "wasm" }],
 *   recordedCode: "abc",
 *   currentCode: "abc",
 * });
 * // ["different execution provider: recorded cpu, now wasm"]
 * ```
 */
export function likelyCauses(evidence: CauseEvidence): string[] {
  const { runId, alteration, runtime, recordedCode, currentCode, changedModule } = evidence;
  const causes: string[] = [];
  if (alteration) causes.push(alterationText(alteration, runId));
  // The workflow decides every prompt and turn: an edited module explains any divergence.
  if (changedModule) causes.push(changedModuleText(changedModule));
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
