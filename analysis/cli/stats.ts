/**
 * `deno task stats welch --a MEAN,SEM,N --b MEAN,SEM,N [--format table|json|csv]`: Welch's t-test
 * from the summary statistics a paper prints, to check its table by hand. The table rounds to
 * four significant digits; json and csv carry full precision.
 */
import {
  commandExitCode,
  defineCommand,
  formatOption,
  parseFormat,
  toCsv,
  UsageError,
} from "../../events/cli/mod.ts";
import { type GroupSummary, StatsInputError, welchFromSummary } from "../stats/mod.ts";

const USAGE = "deno task stats welch --a MEAN,SEM,N --b MEAN,SEM,N [--format table|json|csv]";

const cli = defineCommand({
  name: "stats",
  usage: USAGE,
  summary: "Welch's t-test of mean(a) - mean(b) from (mean, SEM, n): diff, SE, df, t, p, 95% CI.",
  options: {
    a: { type: "string", value: "MEAN,SEM,N", help: "group a as MEAN,SEM,N (e.g. 41.9,0.3,10)" },
    b: { type: "string", value: "MEAN,SEM,N", help: "group b as MEAN,SEM,N" },
    ...formatOption,
    json: { type: "boolean", help: "the same as --format json (kept for scripts)" },
  },
  examples: ["deno task stats welch --a 41.9,0.3,10 --b 39.9,0.4,10"],
});

function parseGroup(flag: string, text: unknown): GroupSummary {
  if (typeof text !== "string") throw new UsageError(`--${flag} MEAN,SEM,N is required`);
  const parts = text.split(",").map((s) => s.trim());
  const [mean, sem, n] = parts.map(Number);
  if (parts.length !== 3 || parts.some((p) => p === "") || [mean, sem, n].some(Number.isNaN)) {
    throw new UsageError(`--${flag} must be three numbers MEAN,SEM,N; got ${text}`);
  }
  return { mean, sem, n };
}

// Bad numbers on the command line are the caller's mistake: exit 2 with the usage line.
function usageOnBadInput<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof StatsInputError) throw new UsageError(err.message);
    throw err;
  }
}

/** `deno task stats ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, () => {
    const { values, positionals } = cli.parse(args);
    if (positionals[0] !== "welch" || positionals.length !== 1) {
      throw new UsageError(`the only statistic is welch; got ${positionals.join(" ") || "none"}`);
    }
    const r = usageOnBadInput(() =>
      welchFromSummary(parseGroup("a", values.a), parseGroup("b", values.b))
    );
    const format = values.json ? "json" : parseFormat(values.format);
    if (format === "json") {
      console.log(JSON.stringify({ diff: r.diff, se: r.se, df: r.df, t: r.t, p: r.p, ci95: r.ci }));
      return;
    }
    if (format === "csv") {
      const columns = ["diff", "se", "df", "t", "p", "ci95_low", "ci95_high"];
      console.log(toCsv(columns, [[r.diff, r.se, r.df, r.t, r.p, r.ci[0], r.ci[1]]]).trimEnd());
      return;
    }
    const digits = (x: number) => Number(x.toPrecision(4)).toString();
    // A p-value below 1e-4 keeps its exponent: rounding it to 0 would claim certainty.
    const p = r.p < 1e-4 ? r.p.toExponential(2) : digits(r.p);
    console.log(
      [
        `diff  ${digits(r.diff)}`,
        `se    ${digits(r.se)}`,
        `df    ${digits(r.df)}`,
        `t     ${digits(r.t)}`,
        `p     ${p}`,
        `ci95  [${digits(r.ci[0])}, ${digits(r.ci[1])}]`,
      ].join("\n"),
    );
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
