/**
 * Appends one run annotation (a tag, an untag, hiding or showing a run) to the annotations
 * stream at the next version, with that version as its `seq`. Two processes annotating at once
 * both succeed: the one that loses the race for a version takes the next.
 *
 * @example
 * ```ts
 * import { annotateRun } from "./annotate-run.ts";
 * import type { NewEvent } from "./catalogue.ts";
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore<NewEvent>;
 * await annotateRun(store, { type: "run.tagged", runId: "smoke-1", tag: "baseline" });
 * await annotateRun(store, { type: "run.hidden", runId: "smoke-1" });
 * ```
 */
import type { NewEvent } from "./catalogue.ts";
import { EventIdConflictError, WrongExpectedVersionError } from "./errors.ts";
import { ANNOTATIONS_STREAM } from "./run-annotations.ts";
import type { AppendResult, EventStore } from "./store/event-store.ts";

/** An annotation as a user asks for it; `seq` is assigned on append. */
export type RunAnnotation =
  | { readonly type: "run.tagged" | "run.untagged"; readonly runId: string; readonly tag: string }
  | { readonly type: "run.hidden" | "run.unhidden"; readonly runId: string };

/** Versions tried before giving up when other writers keep taking the next one. */
const ATTEMPTS = 8;

/**
 * Appends `annotation`; throws EventValidationError (a bad tag), StoreReadOnlyError, ...
 *
 * @example
 * ```ts
 * import { annotateRun } from "./annotate-run.ts";
 * import type { NewEvent } from "./catalogue.ts";
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore<NewEvent>;
 * const { appended: [e] } = await annotateRun(store, { type: "run.untagged", runId: "r", tag: "x" });
 * ```
 */
export async function annotateRun(
  store: EventStore<NewEvent>,
  annotation: RunAnnotation,
): Promise<AppendResult> {
  for (let attempt = 1;; attempt++) {
    const version = await store.streamVersion(ANNOTATIONS_STREAM);
    const seq = version + 1;
    const event = (annotation.type === "run.tagged" || annotation.type === "run.untagged"
      ? { type: annotation.type, data: { runId: annotation.runId, tag: annotation.tag, seq } }
      : { type: annotation.type, data: { runId: annotation.runId, seq } }) as NewEvent;
    try {
      return await store.append(ANNOTATIONS_STREAM, [event], { expectedVersion: version });
    } catch (err) {
      // Another writer took this version first: its event holds our seq (a conflicting id) or
      // the stream moved on.
      const raced = err instanceof WrongExpectedVersionError || err instanceof EventIdConflictError;
      if (!raced || attempt === ATTEMPTS) {
        throw err;
      }
    }
  }
}
