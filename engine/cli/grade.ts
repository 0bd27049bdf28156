/**
 * `deno task grade`: grade one prediction against a gold answer, or a JSONL batch.
 *
 *   deno task grade --gold '$\frac{1}{3}$' --pred 'so $\boxed{1/3}$' [--format table|json|csv]
 *   deno task grade FILE.jsonl [--timeout-ms 5000]      # JSONL results on stdout, summary on stderr
 *
 * `--format` defaults to table for one pair and to json (JSONL, one record per line as it is
 * graded) for a batch, which scripts read line by line. `--json` is kept as `--format json`.
 * Exit 0 whether or not answers match; 2 on bad usage.
 */
import {
  commandExitCode,
  defineCommand,
  ExitCode,
  type OutputFormat,
  parseFormat,
  textTable,
  toCsv,
  UsageError,
  userPath,
} from "../../events/cli/mod.ts";
import {
  type BatchRecord,
  DEFAULT_GRADE_OPTIONS,
  gradeJsonl,
  type GradeOptions,
  type GradeResult,
  GradeRunner,
  summarize,
} from "../tasks/math/mod.ts";
import { readRegularTextFile } from "../../events/files/mod.ts";

/** The largest JSONL batch read (held as one string): a million short pairs are about 100 MiB. */
const BATCH_MAX_BYTES = 256 * 1024 * 1024;

const usage =
  "deno task grade (--gold TEXT --pred TEXT | FILE.jsonl) [--float-rounding N] [--strict|--no-strict] " +
  "[--allow-set-relation] [--plain-only | --latex-only] [--timeout-ms MS] " +
  "[--format table|json|csv]";

const cli = defineCommand({
  name: "grade",
  usage,
  summary: "Grade a predicted math answer against a gold answer (Math-Verify style), or a JSONL " +
    "batch of {gold, pred, options} lines.",
  options: {
    gold: { type: "string", value: "TEXT", help: "gold answer or solution text" },
    pred: { type: "string", value: "TEXT", help: "predicted answer or model output" },
    "float-rounding": {
      type: "string",
      value: "N",
      help: "decimal places numbers are rounded to (default 6)",
    },
    strict: {
      type: "boolean",
      help: "variables must match by name (default); --no-strict lets f(x) match f(y)",
    },
    "allow-set-relation": {
      type: "boolean",
      help: "let a predicted relation (-2 <= x <= 7) match a gold set ([-2, 7])",
    },
    "plain-only": { type: "boolean", help: "extract plain numbers only (1 000, 2,74)" },
    "latex-only": {
      type: "boolean",
      help:
        "extract LaTeX only ($...$, \\(...\\), \\boxed{}), as Math-Verify's LatexExtractionConfig",
    },
    "timeout-ms": {
      type: "string",
      value: "MS",
      help: "per-item time limit in milliseconds (default 5000)",
    },
    format: {
      type: "string",
      value: "table|json|csv",
      help: "output format (default table for one pair, json lines for a FILE)",
    },
    json: { type: "boolean", help: "the same as --format json (kept for scripts)" },
  },
  examples: [
    "deno task grade --gold '$\\frac{1}{3}$' --pred 'so $\\boxed{1/3}$'",
    "deno task grade answers.jsonl --format csv > graded.csv",
  ],
});

const COLUMNS = ["equivalent", "gold", "gold_parsed", "pred", "pred_parsed", "reason"] as const;

// One flat row per result, for the table and csv formats.
function row(result: GradeResult): unknown[] {
  return [
    result.equivalent,
    result.gold.extracted,
    result.gold.parsed ?? result.gold.parseError ?? null,
    result.pred.extracted,
    result.pred.parsed ?? result.pred.parseError ?? null,
    result.reason,
  ];
}

function batchTable(records: readonly BatchRecord[]): [string[], unknown[][]] {
  const columns = ["line", ...COLUMNS, "expected", "error"];
  const rows = records.map((r) =>
    "error" in r
      ? [r.line, ...COLUMNS.map(() => null), null, r.error]
      : [r.line, ...row(r), r.expected ?? null, null]
  );
  return [columns, rows];
}

function integerOption(name: string, value: string | undefined, min: number, max: number) {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}; got ${value}`);
  }
  return n;
}

function describe(result: GradeResult): string {
  const side = (label: string, s: GradeResult["gold"]) =>
    s.extracted === null
      ? `${label}: nothing extracted`
      : `${label}: ${JSON.stringify(s.extracted)} (from ${s.source}) -> ${
        s.parsed ?? `unparsed: ${s.parseError}`
      }`;
  return [
    `equivalent: ${result.equivalent ? "yes" : "no"}`,
    side("gold", result.gold),
    side("pred", result.pred),
    `reason: ${result.reason}`,
  ].join("\n");
}

/** `deno task grade ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(usage, async () => {
    const strictArgs = args.filter((a) => a !== "--no-strict");
    const noStrict = strictArgs.length !== args.length;
    const { values, positionals } = cli.parse(strictArgs);
    if (noStrict && values.strict) throw new UsageError("--strict and --no-strict conflict");
    if (values["plain-only"] && values["latex-only"]) {
      throw new UsageError("--plain-only and --latex-only conflict: choose one extractor");
    }
    const rounding = integerOption("float-rounding", values["float-rounding"], 0, 15);
    // Only options given on the command line override a batch line's own options.
    const overrides: Partial<GradeOptions> = {
      ...(noStrict ? { strict: false } : {}),
      ...(values["allow-set-relation"] ? { allowSetRelation: true } : {}),
      ...(values["plain-only"] ? { plainOnly: true } : {}),
      ...(values["latex-only"] ? { latexOnly: true } : {}),
      ...(rounding === undefined ? {} : { floatRounding: rounding }),
    };
    const timeoutMs = integerOption("timeout-ms", values["timeout-ms"], 1, 3_600_000) ?? 5000;

    if (values.json && values.format !== undefined && values.format !== "json") {
      throw new UsageError(`--json and --format ${values.format} conflict: choose one`);
    }
    const single = values.gold !== undefined || values.pred !== undefined;
    const format: OutputFormat = values.json
      ? "json"
      : values.format === undefined
      ? (single ? "table" : "json")
      : parseFormat(values.format);
    if (single) {
      if (positionals.length > 0) {
        throw new UsageError("give either --gold/--pred or a FILE, not both");
      }
      if (values.gold === undefined || values.pred === undefined) {
        throw new UsageError("single mode needs both --gold and --pred");
      }
      const runner = new GradeRunner({ timeoutMs });
      try {
        const result = await runner.grade(values.gold, values.pred, {
          ...DEFAULT_GRADE_OPTIONS,
          ...overrides,
        });
        if (format === "json") console.log(JSON.stringify(result, null, 2));
        else if (format === "csv") console.log(toCsv(COLUMNS, [row(result)]).trimEnd());
        else console.log(describe(result));
      } finally {
        await runner.close();
      }
      return ExitCode.ok;
    }

    if (positionals.length !== 1) throw new UsageError("give one FILE.jsonl, or --gold and --pred");
    const file = userPath(positionals[0]);
    let text: string;
    try {
      text = await readRegularTextFile(file, { maxBytes: BATCH_MAX_BYTES });
    } catch (err) {
      throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
    }
    const records: BatchRecord[] = [];
    for await (const record of gradeJsonl(text, { timeoutMs, overrides })) {
      records.push(record);
      if (format === "json") console.log(JSON.stringify(record));
    }
    if (format !== "json") {
      const [columns, rows] = batchTable(records);
      console.log(format === "csv" ? toCsv(columns, rows).trimEnd() : textTable(columns, rows));
    }
    const s = summarize(records);
    const agreement = s.withExpected > 0
      ? `; agrees with the expected verdict on ${s.agreed}/${s.withExpected} ` +
        `(${((100 * s.agreed) / s.withExpected).toFixed(1)}%)`
      : "";
    console.error(
      `graded ${s.graded} of ${s.lines} lines: ${s.equivalent} equivalent, ${
        s.graded - s.equivalent
      } not ` +
        `(${s.timeouts} timeouts), ${s.malformed} malformed${agreement}`,
    );
    return ExitCode.ok;
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
