/**
 * `deno task report [RUN...] [--group-by KEY] [--baseline SELECTOR] [--format md|csv|json]`:
 * the papers' tables for runs grouped by a config key across seeds.
 */
import {
  defineCommand,
  parseFormat,
  runCommand,
  storeOption,
  UsageError,
} from "../../events/cli/command.ts";
import { SPIKE_MULTIPLE } from "../stats/mod.ts";
import { openAnalysis } from "../queries/open-analysis.ts";
import { resolveRuns, UnknownRunError } from "../queries/resolve-runs.ts";
import { loadRunSummaries } from "../queries/run-summaries.ts";
import { buildReport, renderReport, ReportError, type ReportFormat } from "../report/mod.ts";

const USAGE = "deno task report [RUN...] [--group-by KEY] [--baseline VALUE|KEY=VALUE] " +
  "[--metric avg@k|pass@k] [--format md|csv|json] [--out FILE] [--store PATH|URL]";

const cli = defineCommand({
  name: "report",
  usage: USAGE,
  summary: "Groups runs (ids or `latest`; all runs when none is named) by a config key across " +
    "seeds and prints accuracy mean ± SEM per benchmark, each group against the baseline " +
    "(difference, 95% CI, Welch p), the pairwise matrix, stability, critic and cost tables.",
  options: {
    ...storeOption,
    "group-by": {
      type: "string",
      default: "estimator",
      help: "config key to group runs by (default estimator)",
    },
    baseline: {
      type: "string",
      help: "group to compare against: VALUE or KEY=VALUE (default: first group)",
    },
    format: { type: "string", default: "md", help: "md (default), csv or json" },
    metric: {
      type: "string",
      default: "avg@k",
      help: "accuracy per benchmark: avg@k (default) or pass@k, k = samples per problem",
    },
    out: { type: "string", help: "write the report to this file instead of stdout" },
    "spike-multiple": {
      type: "string",
      default: String(SPIKE_MULTIPLE),
      help: `grad-norm spike threshold, × running median (default ${SPIKE_MULTIPLE})`,
    },
  },
});

function parseBaseline(selector: string | undefined, groupBy: string): string | undefined {
  if (selector === undefined) return undefined;
  const eq = selector.indexOf("=");
  if (eq < 0) return selector;
  const key = selector.slice(0, eq);
  if (key !== groupBy) {
    throw new UsageError(
      `--baseline ${selector} names key ${key} but runs are grouped by ${groupBy}`,
    );
  }
  return selector.slice(eq + 1);
}

await runCommand(USAGE, async () => {
  const { values, positionals } = cli.parse(Deno.args);
  const format = parseFormat<ReportFormat>(values.format, ["md", "csv", "json"]);
  const metric = values.metric;
  if (metric !== "avg@k" && metric !== "pass@k") {
    throw new UsageError(`--metric must be avg@k or pass@k; got ${metric}`);
  }
  const groupBy = values["group-by"];
  const spikeMultiple = Number(values["spike-multiple"]);
  if (!(spikeMultiple > 0)) {
    throw new UsageError(`--spike-multiple must be a number > 0; got ${values["spike-multiple"]}`);
  }
  const baseline = parseBaseline(values.baseline, groupBy);
  await using analysis = await openAnalysis(values.store, { readOnly: true });
  let text: string;
  try {
    const ids = positionals.length > 0
      ? await resolveRuns(analysis.db, positionals)
      : (await analysis.db.selectFrom("runs").select("run_id").orderBy("started_position")
        .execute())
        .map((r) => r.run_id);
    const runs = await loadRunSummaries(analysis.db, ids, metric);
    text = renderReport(buildReport(runs, { groupBy, baseline, spikeMultiple, metric }), format);
  } catch (err) {
    if (err instanceof UnknownRunError || err instanceof ReportError) {
      throw new UsageError(err.message);
    }
    throw err;
  }
  if (values.out) await Deno.writeTextFile(values.out, text);
  else console.log(text.replace(/\n$/, ""));
});
