/**
 * Annotations of runs: tags and hiding, set by a user after (or while) a run trains. They are
 * events, so nothing is ever deleted from the log: hiding a run only records that it is hidden,
 * and unhiding records that again. They live in a stream of their own, {@link ANNOTATIONS_STREAM},
 * never in a run's stream: a run's stream is what replay and resume re-derive event by event,
 * and an annotation between two of its events would be a divergence there.
 *
 * | type            | coordinates | one per                    |
 * | --------------- | ----------- | -------------------------- |
 * | `run.tagged`    | seq         | tag added to a run         |
 * | `run.untagged`  | seq         | tag taken off a run        |
 * | `run.hidden`    | seq         | run hidden from lists      |
 * | `run.unhidden`  | seq         | run shown again            |
 *
 * `seq` is the event's version in the annotations stream, so tagging a run again after untagging
 * it is a new event (coordinates alone would make it a no-op re-append).
 *
 * @example
 * ```ts
 * import { runCatalogue } from "./catalogue.ts";
 *
 * const e = { type: "run.tagged", data: { runId: "smoke-1", tag: "baseline", seq: 1 } } as const;
 * runCatalogue.validate(e.type, e.data);
 * ```
 */
import { z } from "zod";
import { defineEvent } from "./define-event.ts";
import { count } from "./fields.ts";

/** The stream holding every run annotation (`:` keeps it apart from any run id). */
export const ANNOTATIONS_STREAM = "annotations:runs";

/** What a tag may be, in words, for errors and help texts. */
export const TAG_RULE = "1 to 64 characters of A-Z a-z 0-9 . _ - : / + =, starting with a " +
  "letter or digit";

/** A tag: short, no spaces or commas (lists of tags are comma-joined). */
export const tag = z.string().regex(
  /^[A-Za-z0-9][A-Za-z0-9._:\/+=-]{0,63}$/,
  `expected ${TAG_RULE}`,
);

/** The annotated run: any stored stream id (older ones may predate the run id rule). */
const runId = z.string().min(1).max(200);

/** The annotation's version in {@link ANNOTATIONS_STREAM}, from 1. */
const seq = count.min(1);

/** A tag was put on a run. */
export const runTagged = defineEvent({
  type: "run.tagged",
  schemaVersion: 1,
  schema: z.strictObject({ runId, tag, seq }),
  coordinates: (d) => ({ seq: d.seq }),
});

/** A tag was taken off a run. */
export const runUntagged = defineEvent({
  type: "run.untagged",
  schemaVersion: 1,
  schema: z.strictObject({ runId, tag, seq }),
  coordinates: (d) => ({ seq: d.seq }),
});

/** A run was hidden from run lists (its events stay, and `--all` shows it). */
export const runHidden = defineEvent({
  type: "run.hidden",
  schemaVersion: 1,
  schema: z.strictObject({ runId, seq }),
  coordinates: (d) => ({ seq: d.seq }),
});

/** A hidden run was shown again. */
export const runUnhidden = defineEvent({
  type: "run.unhidden",
  schemaVersion: 1,
  schema: z.strictObject({ runId, seq }),
  coordinates: (d) => ({ seq: d.seq }),
});

/** The annotation event definitions. */
export const annotationEventDefinitions = [runTagged, runUntagged, runHidden, runUnhidden] as const;
