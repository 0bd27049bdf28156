/**
 * A run stopped on request (Ctrl-C) ends its attempt with `run.failed` whose stage is
 * "interrupted": the event runs have always written for it, so logs recorded before the
 * `interrupted` status existed read the same way, and resume, replay and the attempts of a run
 * (each `run.failed` closes one) need nothing new. Readers give such an attempt the status
 * `interrupted`, not `failed`: nothing went wrong, and `train --resume` continues it.
 *
 * @example
 * ```ts
 * import type { EventData } from "./catalogue.ts";
 * import { failedRunStatus, INTERRUPTED_STAGE } from "./run-interruption.ts";
 *
 * const error = { name: "Interrupted", message: "stopped on request" };
 * const stopped: EventData<"run.failed"> = { step: 3, stage: INTERRUPTED_STAGE, error };
 * const crashed: EventData<"run.failed"> = { step: 3, stage: "update", error };
 * failedRunStatus(stopped); // "interrupted"
 * failedRunStatus(crashed); // "failed"
 * ```
 */

/** The `run.failed` stage of a run stopped on request. */
export const INTERRUPTED_STAGE = "interrupted";

/** The status a `run.failed` event gives the attempt it ends. */
export function failedRunStatus(data: { readonly stage: string }): "interrupted" | "failed" {
  return data.stage === INTERRUPTED_STAGE ? "interrupted" : "failed";
}
