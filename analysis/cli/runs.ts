/**
 * `deno task runs`: the runs of a store, one row per run (a resumed run once, with its attempts
 * counted), and their annotations. `list` (the default) hides hidden runs unless `--all`;
 * `attempts RUN` shows each attempt of a run; `tag`, `untag`, `hide` and `unhide` record an
 * annotation event (the log is only ever appended to: hiding deletes nothing).
 */
import {
  commandExitCode,
  defineCommand,
  formatOption,
  parseFormat,
  storeOption,
  UsageError,
} from "../../events/cli/mod.ts";
import {
  annotateRun,
  EventValidationError,
  openStore,
  type RunAnnotation,
  TAG_RULE,
} from "../../events/mod.ts";
import { type Analysis, openAnalysis } from "../queries/open-analysis.ts";
import { resolveRuns, UnknownRunError } from "../queries/resolve-runs.ts";
import { formatQueryTable } from "../sql/format-query-table.ts";
import { sqlString } from "../sql/run-query.ts";

const USAGE = "deno task runs [list] [--all] [--tag TAG] [--status STATUS] " +
  "[--format table|json|csv] [--store PATH|URL] | runs attempts RUN | runs tag|untag RUN TAG... " +
  "| runs hide|unhide RUN...";

const STATUSES = ["running", "completed", "failed", "interrupted"] as const;

const cli = defineCommand({
  name: "runs",
  usage: USAGE,
  summary: "Lists the runs of a store (one row per run: its status, attempts, duration, tags; " +
    "for an eval run what it evaluates: RUN@STEP, RUN@STEP/WG or a model directory), " +
    "shows a run's attempts, and tags or hides runs. RUN is a run id or latest. Tags and " +
    `hiding are recorded as events; a tag is ${TAG_RULE}.`,
  options: {
    ...storeOption,
    ...formatOption,
    all: { type: "boolean", help: "list: include hidden runs" },
    tag: { type: "string", value: "TAG", help: "list: only runs with this tag" },
    status: {
      type: "string",
      value: "STATUS",
      help: `list: only runs of this status (${STATUSES.join(", ")})`,
    },
  },
  examples: [
    "deno task runs --all --format json",
    "deno task runs tag latest baseline",
    "deno task runs attempts latest",
  ],
});

const ACTIONS = ["list", "attempts", "tag", "untag", "hide", "unhide"] as const;
type Action = (typeof ACTIONS)[number];

/** What an annotating action did, as its confirmation says it. */
const DONE = { tag: "tagged", untag: "untagged", hide: "hidden", unhide: "unhidden" } as const;

/** `deno task runs ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    const format = parseFormat(values.format);
    const [first, ...rest] = positionals;
    const action = (first ?? "list") as Action;
    if (!ACTIONS.includes(action)) {
      throw new UsageError(`unknown action ${first}: use one of ${ACTIONS.join(", ")}`);
    }
    if (action !== "list" && (values.all || values.tag !== undefined || values.status)) {
      throw new UsageError("--all, --tag and --status filter runs list only");
    }
    if (values.status !== undefined && !(STATUSES as readonly string[]).includes(values.status)) {
      throw new UsageError(`--status must be one of ${STATUSES.join(", ")}; got ${values.status}`);
    }
    await using analysis = await openAnalysis(values.store);
    if (action === "list") {
      if (rest.length > 0) throw new UsageError(`runs list takes no RUN (got ${rest.join(" ")})`);
      return await print(analysis, listQuery(values), format);
    }
    if (rest.length === 0) throw new UsageError(`runs ${action} needs a RUN (an id or latest)`);
    if (action === "attempts") {
      if (rest.length > 1) throw new UsageError("runs attempts takes one RUN");
      const [run] = await runIds(analysis, rest);
      return await print(analysis, attemptsQuery(run), format);
    }
    const tagging = action === "tag" || action === "untag";
    const [runArg, ...tags] = tagging ? rest : [];
    if (tagging && tags.length === 0) throw new UsageError(`runs ${action} needs RUN and a TAG`);
    const runs = await runIds(analysis, tagging ? [runArg] : rest);
    const annotations = await pendingAnnotations(analysis, action, runs, tags);
    await using store = await openStore(values.store, { create: false });
    for (const { annotation, changes } of annotations) {
      const what = "tag" in annotation ? `${annotation.runId} ${annotation.tag}` : annotation.runId;
      if (!changes) {
        console.error(`${what}: already ${DONE[action]}`);
        continue;
      }
      try {
        await annotateRun(store, annotation);
      } catch (err) {
        if (err instanceof EventValidationError) throw new UsageError(err.message);
        throw err;
      }
      console.log(`${DONE[action]} ${what}`);
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));

/** Resolves RUN arguments, a run that is not there being a usage mistake. */
async function runIds(analysis: Analysis, args: readonly string[]): Promise<string[]> {
  try {
    return await resolveRuns(analysis.db, args);
  } catch (err) {
    if (err instanceof UnknownRunError) throw new UsageError(err.message);
    throw err;
  }
}

/** The annotations asked for, each with whether it changes anything (a second tag does not). */
async function pendingAnnotations(
  analysis: Analysis,
  action: Exclude<Action, "list" | "attempts">,
  runs: readonly string[],
  tags: readonly string[],
): Promise<{ annotation: RunAnnotation; changes: boolean }[]> {
  const inRuns = runs.map(sqlString).join(", ");
  const state = (await analysis.conn.runAndReadAll(
    `SELECT run_id, hidden, coalesce(tags, '') AS tags FROM runs WHERE run_id IN (${inRuns})`,
  )).getRowObjectsJS() as { run_id: string; hidden: boolean; tags: string }[];
  const of = new Map(state.map((r) => [r.run_id, r]));
  if (action === "hide" || action === "unhide") {
    return runs.map((runId) => ({
      annotation: { type: action === "hide" ? "run.hidden" : "run.unhidden", runId },
      changes: of.get(runId)!.hidden !== (action === "hide"),
    }));
  }
  const runId = runs[0];
  const current = of.get(runId)!.tags.split(",").filter(Boolean);
  return [...new Set(tags)].map((tag) => ({
    annotation: { type: action === "tag" ? "run.tagged" : "run.untagged", runId, tag },
    changes: current.includes(tag) !== (action === "tag"),
  }));
}

function listQuery(values: { all?: boolean; tag?: string; status?: string }): string {
  const where = [
    values.all ? "TRUE" : "NOT hidden",
    values.tag === undefined
      ? "TRUE"
      : `EXISTS (SELECT 1 FROM run_tags g WHERE g.run_id = r.run_id AND g.tag = ${
        sqlString(values.tag)
      })`,
    values.status === undefined ? "TRUE" : `status = ${sqlString(values.status)}`,
  ];
  // What an eval run evaluated, as `deno task eval` labels it in its run.started config:
  // RUN@STEP (a run's team), RUN@STEP/WG (one group's checkpoint) or the model directory.
  return `SELECT run_id, status, attempts, workflow, estimator,
      (SELECT value FROM run_config c WHERE c.run_id = r.run_id AND c.key = 'eval.model.label')
        AS evaluates,
      steps_done, steps,
      round(duration_s, 1) AS duration_s, tags, hidden,
      strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS started_utc,
      strftime(ended_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS ended_utc, error
    FROM runs r WHERE ${where.join(" AND ")} ORDER BY started_position DESC`;
}

function attemptsQuery(run: string): string {
  return `SELECT attempt, status,
      strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS started_utc,
      strftime(ended_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') AS ended_utc,
      round(duration_s, 1) AS duration_s, events, failed_step, failed_stage, error, host, pid
    FROM run_attempts WHERE run_id = ${sqlString(run)} ORDER BY attempt`;
}

async function print(
  analysis: Analysis,
  query: string,
  format: "table" | "json" | "csv",
): Promise<void> {
  const reader = await analysis.conn.runAndReadAll(query);
  const table = {
    kind: "query-table" as const,
    columns: reader.columnNames(),
    rows: reader.getRowsJS(),
    truncated: false,
  };
  console.log(formatQueryTable(table, format).replace(/\n$/, ""));
}
