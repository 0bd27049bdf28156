/**
 * Batch grading of a JSONL file: one object per line with `gold`, `pred` and optional `options`
 * (the shape of `tests/conformance/math-equivalence.jsonl`; an `equivalent` field, when
 * present, is the expected verdict and is checked). A malformed line becomes an error record
 * with its line number; the batch goes on.
 *
 * @example
 * ```ts
 * const text = await Deno.readTextFile("tests/conformance/math-equivalence.jsonl");
 * for await (const rec of gradeJsonl(text, { timeoutMs: 2000 })) console.log(JSON.stringify(rec));
 * ```
 */
import type { GradeResult } from "./grade.ts";
import { GradeRunner, TIMEOUT_REASON } from "./grade-runner.ts";
import { type GradeOptions, gradeOptions } from "./options.ts";

/** One graded line. */
export interface BatchResult extends GradeResult {
  readonly line: number;
  /** The line's own `equivalent` field, when it had one. */
  readonly expected?: boolean;
}

/** A line that could not be graded, and why. */
export interface BatchError {
  readonly line: number;
  readonly error: string;
}

/** A record of the batch output. */
export type BatchRecord = BatchResult | BatchError;

/** Counts over a finished batch. */
export interface BatchSummary {
  readonly lines: number;
  readonly graded: number;
  readonly equivalent: number;
  readonly malformed: number;
  readonly timeouts: number;
  /** Lines with an expected verdict, and how many the grader agreed with. */
  readonly withExpected: number;
  readonly agreed: number;
}

interface BatchItem {
  readonly gold: string;
  readonly pred: string;
  readonly options: GradeOptions;
  readonly expected?: boolean;
}

/** Reads one JSONL line; throws an Error naming the field that is wrong. */
export function parseBatchLine(text: string): BatchItem {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new Error(`invalid JSON (${(err as Error).message})`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new Error("expected a JSON object with gold and pred");
  }
  const o = raw as Record<string, unknown>;
  for (const key of ["gold", "pred"] as const) {
    if (typeof o[key] !== "string") {
      throw new Error(
        `field ${key} must be a string, got ${
          o[key] === undefined ? "nothing" : JSON.stringify(o[key])
        }`,
      );
    }
  }
  if (o.equivalent !== undefined && typeof o.equivalent !== "boolean") {
    throw new Error(`field equivalent must be true or false, got ${JSON.stringify(o.equivalent)}`);
  }
  return {
    gold: o.gold as string,
    pred: o.pred as string,
    options: gradeOptions(o.options),
    expected: o.equivalent as boolean | undefined,
  };
}

/** Grades every non-empty line of `text`, in order, each under the time limit. */
export async function* gradeJsonl(
  text: string,
  settings: { readonly timeoutMs: number; readonly overrides?: Partial<GradeOptions> },
): AsyncGenerator<BatchRecord> {
  const runner = new GradeRunner({ timeoutMs: settings.timeoutMs });
  try {
    const lines = text.split(/\r?\n/);
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === "") continue;
      let item: BatchItem;
      try {
        item = parseBatchLine(lines[i]);
      } catch (err) {
        yield Object.freeze({ line: i + 1, error: `line ${i + 1}: ${(err as Error).message}` });
        continue;
      }
      const options = { ...item.options, ...settings.overrides };
      const result = await runner.grade(item.gold, item.pred, options);
      yield Object.freeze({
        line: i + 1,
        ...result,
        ...(item.expected === undefined ? {} : { expected: item.expected }),
      });
    }
  } finally {
    await runner.close();
  }
}

/** Folds batch records into counts. */
export function summarize(records: readonly BatchRecord[]): BatchSummary {
  let graded = 0, equivalent = 0, malformed = 0, timeouts = 0, withExpected = 0, agreed = 0;
  for (const r of records) {
    if ("error" in r) {
      malformed++;
      continue;
    }
    graded++;
    if (r.equivalent) equivalent++;
    if (r.reason === TIMEOUT_REASON) timeouts++;
    if (r.expected !== undefined) {
      withExpected++;
      if (r.expected === r.equivalent) agreed++;
    }
  }
  return Object.freeze({
    lines: records.length,
    graded,
    equivalent,
    malformed,
    timeouts,
    withExpected,
    agreed,
  });
}
