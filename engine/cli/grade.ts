/**
 * `deno task grade`: grade one prediction against a gold answer, or a JSONL batch.
 *
 *   deno task grade --gold '$\frac{1}{3}$' --pred 'so $\boxed{1/3}$' [--json]
 *   deno task grade FILE.jsonl [--timeout-ms 5000]      # JSONL results on stdout, summary on stderr
 *
 * Exit 0 whether or not answers match; 2 on bad usage.
 */
import { defineCommand, ExitCode, runCommand, UsageError } from "../../events/cli/command.ts";
import {
  type BatchRecord,
  gradeJsonl,
  type GradeOptions,
  type GradeResult,
  GradeRunner,
  summarize,
} from "../tasks/math/mod.ts";
import { DEFAULT_GRADE_OPTIONS } from "../tasks/math/options.ts";

const usage =
  "deno task grade (--gold G --pred P | FILE.jsonl) [--float-rounding N] [--strict|--no-strict] " +
  "[--allow-set-relation] [--plain-only | --latex-only] [--timeout-ms MS] [--json]";

const cli = defineCommand({
  name: "grade",
  usage,
  summary: "Grade a predicted math answer against a gold answer (Math-Verify style), or a JSONL " +
    "batch of {gold, pred, options} lines.",
  options: {
    gold: { type: "string", help: "gold answer or solution text" },
    pred: { type: "string", help: "predicted answer or model output" },
    "float-rounding": { type: "string", help: "decimal places numbers are rounded to (default 6)" },
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
    "timeout-ms": { type: "string", help: "per-item time limit in milliseconds (default 5000)" },
    json: { type: "boolean", help: "single mode: print the result as JSON" },
  },
});

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

await runCommand(usage, async () => {
  const args = Deno.args.filter((a) => a !== "--no-strict");
  const noStrict = args.length !== Deno.args.length;
  const { values, positionals } = cli.parse(args);
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

  const single = values.gold !== undefined || values.pred !== undefined;
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
      console.log(values.json ? JSON.stringify(result, null, 2) : describe(result));
    } finally {
      await runner.close();
    }
    return ExitCode.ok;
  }

  if (positionals.length !== 1) throw new UsageError("give one FILE.jsonl, or --gold and --pred");
  if (values.json) throw new UsageError("--json is for single mode; batch output is always JSONL");
  const file = positionals[0];
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const records: BatchRecord[] = [];
  for await (const record of gradeJsonl(text, { timeoutMs, overrides })) {
    records.push(record);
    console.log(JSON.stringify(record));
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
