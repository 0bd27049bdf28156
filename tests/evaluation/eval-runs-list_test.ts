/**
 * `deno task runs` says what each eval run evaluated, from the label `deno task eval` records in
 * its run.started config: `RUN@STEP` for a run's team, `RUN@STEP/WG` for one worker group's
 * checkpoint, the directory for a model directory; a training run evaluates nothing. Real runs
 * through the CLIs, listed as a table, JSON and CSV.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EMBEDDED_MODEL_DIR } from "../../adapters/model/mod.ts";
import { generateArithmeticTasks } from "../../engine/tasks/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { trainRun } from "./trained-run.ts";

const EVAL = "engine/cli/eval.ts";
const RUNS = "analysis/cli/runs.ts";

Deno.test("runs: an eval run names the run, step and worker group or the model it evaluated", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-eval-runs-" });
  try {
    const store = join(tmp, "events.sqlite");
    await trainRun(tmp, store, "exp");
    const data = join(tmp, "tiny.jsonl");
    const tasks = generateArithmeticTasks({ seed: 3, difficulty: 1, split: "test", count: 2 });
    await Deno.writeTextFile(
      data,
      tasks.map((t) => JSON.stringify({ id: t.id, problem: t.problem, answer: t.answer }))
        .join("\n") + "\n",
    );
    const modelDir = EMBEDDED_MODEL_DIR.pathname.replace(/\/$/, "");
    const evaluations = [
      ["ev-team", ["exp"]],
      ["ev-checkpoint", ["--model", "exp", "--worker-group", "solver"]],
      ["ev-dir", ["--model", modelDir]],
    ] as const;
    for (const [runId, what] of evaluations) {
      const r = await runCli(
        EVAL,
        ...what,
        ...["--data", data, "--n", "1", "--max-tokens", "8", "--device", "cpu"],
        ...["--run-id", runId, "--store", store],
      );
      assert.equal(r.code, 0, `${runId}: ${r.stderr}`);
    }
    const expected = [
      ["ev-dir", modelDir],
      ["ev-checkpoint", "exp@0/solver"],
      ["ev-team", "exp@0"],
      ["exp", null],
    ];

    const json = await runCli(RUNS, "--store", store, "--format", "json");
    assert.equal(json.code, 0, json.stderr);
    const rows = JSON.parse(json.stdout) as { run_id: string; evaluates: string | null }[];
    assert.deepEqual(rows.map((r) => [r.run_id, r.evaluates]), expected);

    const csv = await runCli(RUNS, "--store", store, "--format", "csv");
    assert.equal(csv.code, 0, csv.stderr);
    const [header, ...lines] = csv.stdout.trim().split("\n").map((l) => l.split(","));
    const column = header.indexOf("evaluates");
    assert.equal(
      header.slice(0, column + 1).join(","),
      "run_id,status,attempts,workflow,estimator,evaluates",
    );
    assert.deepEqual(lines.map((l) => [l[0], l[column] || null]), expected);

    const table = await runCli(RUNS, "--store", store);
    assert.equal(table.code, 0, table.stderr);
    const cells = table.stdout.split("\n").filter((l) => l.startsWith("| ")).map((l) =>
      l.split("|").slice(1, -1).map((c) => c.trim())
    );
    const at = cells[0].indexOf("evaluates");
    assert.ok(at > 0, cells[0].join(" "));
    assert.deepEqual(cells.slice(1).map((c) => [c[0], c[at] || null]), expected);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
