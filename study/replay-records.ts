/**
 * The outcome of each replay spot-check, kept beside the report (`replays.json` in the output
 * folder) because a replay writes nothing to the store. A record holds for its run as long as the
 * run's stream head (version and hash) is the one it was replayed at, so `--report-only` can tell
 * a current check from a stale one without replaying again.
 */
import { z } from "zod";

const record = z.strictObject({
  cell: z.string(),
  runId: z.string(),
  /** The run's stream head when it was replayed. */
  version: z.number().int(),
  headHash: z.string(),
  /** Identical (or, on another backend, within tolerance). */
  ok: z.boolean(),
  mode: z.enum(["exact", "tolerance"]).nullable(),
  compared: z.number().int(),
  identical: z.number().int(),
  identicalThrough: z.number().int().nullable(),
  firstDivergence: z.strictObject({
    type: z.string(),
    step: z.number().int().nullable(),
    reason: z.string(),
  }).nullable(),
  /** The execution provider the replay ran on. */
  backend: z.string().nullable(),
  seconds: z.number(),
  /** Why the replay could not run to a verdict (then `ok` is false). */
  error: z.string().nullable(),
});

/** One spot-check's outcome. */
export type ReplayRecord = z.output<typeof record>;

/** The replay records file is unreadable as such. */
export class ReplayRecordsError extends Error {
  override name = "ReplayRecordsError";
}

/**
 * The records in `file`; none when it does not exist.
 *
 * @example
 * ```ts
 * const records = await readReplayRecords("docs/study/replays.json");
 * ```
 */
export async function readReplayRecords(file: string): Promise<ReplayRecord[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
  const parsed = z.array(record).safeParse(JSON.parse(text));
  if (!parsed.success) {
    throw new ReplayRecordsError(
      `${file} is not a list of replay records (${parsed.error.issues[0].message} at ` +
        `${parsed.error.issues[0].path.join(".")}); delete it to replay again`,
    );
  }
  return parsed.data;
}

/**
 * Writes `records` to `file`, sorted by cell, as stable JSON.
 *
 * @example
 * ```ts
 * declare const records: ReplayRecord[]; // from replaySpotChecks
 * await writeReplayRecords("docs/study/replays.json", records);
 * ```
 */
export async function writeReplayRecords(
  file: string,
  records: readonly ReplayRecord[],
): Promise<void> {
  const sorted = [...records].sort((a, b) => (a.cell < b.cell ? -1 : a.cell > b.cell ? 1 : 0));
  await Deno.writeTextFile(file, JSON.stringify(sorted, null, 2) + "\n");
}
