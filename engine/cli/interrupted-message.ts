/**
 * What `deno task train` says when Ctrl-C stopped a run: the run, how far it got (steps by their
 * number in the log, from 0, and finished steps counted as on the progress line), where a resume
 * continues and the command that does it, ready to paste.
 *
 * @example
 * ```ts
 * import { TrainingInterrupted } from "../trainer/train-loop.ts";
 * import { interruptedMessage } from "./interrupted-message.ts";
 *
 * interruptedMessage(new TrainingInterrupted(3, 5, 3), "smoke-1", "runs.sqlite");
 * // "run smoke-1 stopped after step 2 (3 of 5 steps done); a resume continues at step 3:
 * //  deno task train --resume smoke-1 --store runs.sqlite"
 * ```
 */
import type { TrainingInterrupted } from "../trainer/train-loop.ts";

export function interruptedMessage(
  interrupted: TrainingInterrupted,
  runId: string,
  store: string,
): string {
  return `run ${runId} ${interrupted.message}: deno task train --resume ` +
    `${shellWord(runId)} --store ${shellWord(store)}`;
}

/** `text` as one POSIX shell word: as it is when the shell reads nothing in it, else quoted. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
