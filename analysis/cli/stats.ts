/**
 * `deno task stats welch --a MEAN,SEM,N --b MEAN,SEM,N [--json]`: Welch's t-test from the
 * summary statistics a paper prints, to check its table by hand.
 */
import { defineCommand, runCommand, UsageError } from "../../events/cli/command.ts";
import { type GroupSummary, StatsInputError, welchFromSummary } from "../stats/mod.ts";

const USAGE = "deno task stats welch --a MEAN,SEM,N --b MEAN,SEM,N [--json]";

const cli = defineCommand({
  name: "stats",
  usage: USAGE,
  summary: "Welch's t-test of mean(a) - mean(b) from (mean, SEM, n): diff, SE, df, t, p, 95% CI.",
  options: {
    a: { type: "string", help: "group a as MEAN,SEM,N (e.g. 41.9,0.3,10)" },
    b: { type: "string", help: "group b as MEAN,SEM,N" },
    json: { type: "boolean", help: "print one JSON object instead of text" },
  },
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

await runCommand(USAGE, () => {
  const { values, positionals } = cli.parse(Deno.args);
  if (positionals[0] !== "welch" || positionals.length !== 1) {
    throw new UsageError(`the only statistic is welch; got ${positionals.join(" ") || "none"}`);
  }
  const r = usageOnBadInput(() =>
    welchFromSummary(parseGroup("a", values.a), parseGroup("b", values.b))
  );
  if (values.json) {
    console.log(JSON.stringify({
      diff: r.diff,
      se: r.se,
      df: r.df,
      t: r.t,
      p: r.p,
      ci95: r.ci,
    }));
    return;
  }
  console.log(
    [
      `diff  ${r.diff}`,
      `se    ${r.se}`,
      `df    ${r.df}`,
      `t     ${r.t}`,
      `p     ${r.p}`,
      `ci95  [${r.ci[0]}, ${r.ci[1]}]`,
    ].join("\n"),
  );
});
