/**
 * Loads math benchmark files as they are published (MATH-500, AIME, AMC, Minerva, GSM8K):
 * JSONL, a JSON array, or Parquet (through DuckDB). The problem comes from `problem`/`question`,
 * the gold answer from `answer` (numbers such as AMC's `142.0` become `142`), or else from the
 * last `\boxed{}` of `solution`; a trailing `#### 72` (GSM8K style) is the answer in either field.
 *
 * @example
 * ```ts
 * const problems = await loadBenchmark("data/math500.jsonl");
 * problems[0]; // { kind: "benchmark-problem", id: "test/precalculus/807.json", problem, answer, ... }
 * ```
 */
import { basename, extname } from "node:path";
import { jsonErrorPlace, readRegularTextFile, regularFileSize } from "../../../events/files/mod.ts";

/** One benchmark problem with its gold answer and where it came from. */
export interface BenchmarkProblem {
  readonly kind: "benchmark-problem";
  readonly id: string;
  readonly problem: string;
  /** The gold answer as text (LaTeX or plain), ready for `gradeAnswer`. */
  readonly answer: string;
  /** The reference solution, when the file has one. */
  readonly solution?: string;
  readonly file: string;
  /** 1-based line (JSONL) or row (JSON array, Parquet). */
  readonly row: number;
}

/** A problem with a benchmark file, naming the file and the line or row. */
export class BenchmarkFileError extends Error {
  override name = "BenchmarkFileError";
  constructor(readonly file: string, readonly location: string | null, detail: string) {
    super(`${file}${location ? ` ${location}` : ""}: ${detail}`);
  }
}

/**
 * The largest .jsonl or .json benchmark read (it is held as one string): MATH's 12,500 problems
 * with solutions are about 10 MiB; a larger set fits as Parquet.
 */
const TEXT_MAX_BYTES = 256 * 1024 * 1024;

const PROBLEM_KEYS = ["problem", "question", "Problem", "Question", "prompt", "input"];
const ANSWER_KEYS = ["answer", "Answer", "final_answer", "expected_answer", "gold", "target"];
const SOLUTION_KEYS = ["solution", "Solution", "reasoning", "output"];
const ID_KEYS = ["unique_id", "id", "ID", "idx", "problem_id"];

function pick(record: Record<string, unknown>, keys: readonly string[]): [string, unknown] | null {
  for (const k of keys) {
    if (record[k] !== undefined && record[k] !== null && record[k] !== "") return [k, record[k]];
  }
  return null;
}

/** Last `\boxed{...}` (or `\fbox`) content, brace-balanced; null when there is none. */
export function lastBoxed(text: string): string | null {
  const at = Math.max(text.lastIndexOf("\\boxed"), text.lastIndexOf("\\fbox"));
  if (at < 0) return null;
  const open = text.indexOf("{", at);
  if (open < 0) return null;
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "{") depth++;
    else if (text[i] === "}" && --depth === 0) return text.slice(open + 1, i).trim();
  }
  return null;
}

function answerText(value: unknown): string | null {
  // GSM8K keeps its worked solution in `answer`, ending in `#### 72`.
  if (typeof value === "string") return (/####\s*(.+?)\s*$/.exec(value)?.[1] ?? value).trim();
  // JS prints 142.0 as "142", which is how AMC's float answers should read.
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "bigint") return value.toString();
  return null;
}

/**
 * Turns one record into a problem, or explains (naming the keys it looked for) why it cannot.
 */
export function recordToProblem(
  record: unknown,
  file: string,
  row: number,
  location: string,
): BenchmarkProblem {
  if (typeof record !== "object" || record === null || Array.isArray(record)) {
    throw new BenchmarkFileError(file, location, "expected an object per problem");
  }
  const r = record as Record<string, unknown>;
  const present = Object.keys(r).join(", ") || "none";
  const problem = pick(r, PROBLEM_KEYS);
  if (!problem || typeof problem[1] !== "string") {
    throw new BenchmarkFileError(
      file,
      location,
      `no problem text (looked for ${
        PROBLEM_KEYS.join("/")
      } as a string; keys present: ${present})`,
    );
  }
  const solutionField = pick(r, SOLUTION_KEYS);
  const solution = typeof solutionField?.[1] === "string" ? solutionField[1] : undefined;
  const answerField = pick(r, ANSWER_KEYS);
  let answer = answerField ? answerText(answerField[1]) : null;
  if (answerField && answer === null) {
    throw new BenchmarkFileError(
      file,
      location,
      `field ${answerField[0]} must be a string or number, got ${JSON.stringify(answerField[1])}`,
    );
  }
  if (answer === null && solution !== undefined) {
    answer = lastBoxed(solution) ?? /####\s*(.+?)\s*$/.exec(solution)?.[1] ?? null;
  }
  if (answer === null || answer === "") {
    throw new BenchmarkFileError(
      file,
      location,
      `no answer (looked for ${ANSWER_KEYS.join("/")}, or a \\boxed{} or "####" in ` +
        `${SOLUTION_KEYS.join("/")}; keys present: ${present})`,
    );
  }
  const id = pick(r, ID_KEYS);
  return Object.freeze({
    kind: "benchmark-problem" as const,
    id: id ? String(id[1]) : `${basename(file)}#${row}`,
    problem: problem[1],
    answer,
    ...(solution === undefined ? {} : { solution }),
    file,
    row,
  });
}

function fromJsonl(text: string, file: string): BenchmarkProblem[] {
  const out: BenchmarkProblem[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch (err) {
      const place = jsonErrorPlace(err);
      throw new BenchmarkFileError(
        file,
        `line ${i + 1}`,
        `invalid JSON${place ? ` at column ${place.column}` : ""}`,
      );
    }
    out.push(recordToProblem(record, file, i + 1, `line ${i + 1}`));
  });
  return out;
}

function fromJsonArray(text: string, file: string): BenchmarkProblem[] {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    const place = jsonErrorPlace(err);
    const where = place ? ` at line ${place.line} column ${place.column}` : "";
    throw new BenchmarkFileError(file, null, `invalid JSON${where}`);
  }
  if (!Array.isArray(data)) {
    throw new BenchmarkFileError(file, null, "a .json benchmark must be an array of problems");
  }
  return data.map((record, i) => recordToProblem(record, file, i + 1, `row ${i + 1}`));
}

async function fromParquet(file: string): Promise<BenchmarkProblem[]> {
  // DuckDB loads only for Parquet: its 1,300-odd files cost every other run a tenth of a second.
  const { DuckDBInstance } = await import("@duckdb/node-api");
  const instance = await DuckDBInstance.create(":memory:");
  const connection = await instance.connect();
  try {
    let rows: Record<string, unknown>[];
    try {
      const reader = await connection.runAndReadAll("SELECT * FROM read_parquet($1)", [file]);
      rows = reader.getRowObjectsJS();
    } catch (err) {
      throw new BenchmarkFileError(
        file,
        null,
        `cannot read as Parquet (${(err as Error).message})`,
      );
    }
    return rows.map((record, i) => recordToProblem(record, file, i + 1, `row ${i + 1}`));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * Loads a benchmark file by extension: `.jsonl`, `.json` (array) or `.parquet`.
 * Throws BenchmarkFileError naming the file and the line/row of the first bad record.
 */
export async function loadBenchmark(file: string): Promise<BenchmarkProblem[]> {
  const ext = extname(file).toLowerCase();
  if (ext !== ".jsonl" && ext !== ".json" && ext !== ".parquet") {
    throw new BenchmarkFileError(
      file,
      null,
      `unknown format ${ext || "(no extension)"}; use .jsonl, .json or .parquet`,
    );
  }
  let text = "";
  try {
    // DuckDB reads Parquet by column, so its size is not held; it must still be a regular file.
    if (ext === ".parquet") await regularFileSize(file, { maxBytes: Infinity });
    else text = await readRegularTextFile(file, { maxBytes: TEXT_MAX_BYTES });
  } catch (err) {
    throw new BenchmarkFileError(file, null, `cannot open (${(err as Error).message})`);
  }
  const problems = ext === ".parquet"
    ? await fromParquet(file)
    : ext === ".jsonl"
    ? fromJsonl(text, file)
    : fromJsonArray(text, file);
  if (problems.length === 0) throw new BenchmarkFileError(file, null, "no problems in the file");
  return problems;
}
