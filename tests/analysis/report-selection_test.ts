/**
 * `deno task report` on a store that holds more than clean runs of one kind: completed training
 * runs, a failed one, an evaluation run on another benchmark, a run evaluated at another k, a
 * debate and a refine run. Each case runs the real CLI in a subprocess on a real SQLite store.
 */
import assert from "node:assert/strict";
import { hashConfig, type NewEvent, openStore } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { fakeRunEvents, type FakeRunSpec } from "../support/fake-run.ts";
import { runSpec } from "./fixtures/fill-store.ts";

const REPORT = "analysis/cli/report.ts";

/** A run's events with its run.started config patched (hash recomputed) and its ending swapped. */
function events(
  spec: FakeRunSpec,
  config: Record<string, unknown>,
  ending: "completed" | "failed" = "completed",
): NewEvent[] {
  const all = [...fakeRunEvents(spec)].flat().map((e) => {
    if (e.type !== "run.started") return e;
    const patched = { ...e.data.config as Record<string, unknown>, ...config };
    return { ...e, data: { ...e.data, config: patched, configHash: hashConfig(patched) } };
  });
  if (ending === "completed") return all;
  return [
    ...all.filter((e) => e.type !== "run.completed"),
    {
      type: "run.failed",
      data: { step: 1, stage: "update", error: { name: "RangeError", message: "out of memory" } },
    },
  ];
}

const SOLVER = [{ name: "solver", role: "solver", wg: "wg0" }];

async function mixedStore(): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-report-selection-" });
  const path = `${dir}/events.sqlite`;
  await using store = await openStore(path);
  const add = (spec: FakeRunSpec, config: Record<string, unknown>, ending?: "failed") =>
    store.append(spec.runId, events(spec, config, ending));
  for (const [estimator, accuracy] of [["grpo", 0.4], ["drmas", 0.7]] as const) {
    for (const seed of [1, 2]) {
      await add(runSpec({ runId: `${estimator}-${seed}`, estimator, seed, accuracy }), {
        name: "sweep",
      });
    }
  }
  await add(runSpec({ runId: "failed-1", seed: 3 }), { name: "sweep" }, "failed");
  await add(runSpec({ runId: "wide-k", estimator: "drmas", seed: 4, k: 16 }), { name: "wide" });
  await add(
    runSpec({ runId: "eval-1", estimator: "grpo", seed: 0, benchmarks: ["sums"], k: 2 }),
    { name: "eval", eval: { protocol: "team", seeds: [0], runs: ["eval-1"] } },
  );
  await add(
    runSpec({ runId: "refine-1", estimator: "refine-rl", seed: 1, agents: [...SOLVER, ...SOLVER] }),
    { name: "refine", workflow: "refine" },
  );
  await add(
    runSpec({
      runId: "debate-1",
      estimator: "mada",
      seed: 1,
      agents: [
        { name: "gen", role: "generator", wg: "wg0" },
        { name: "critic", role: "critic", wg: "wg1" },
        { name: "critic", role: "critic", wg: "wg1" },
      ],
    }),
    { name: "debate" },
  );
  return { dir, path };
}

interface JsonReport {
  groups: { value: string; runs: string[] }[];
  benchmarks: string[];
  averageOf: string[];
  accuracy: { group: string; benchmark: string; n: number; samples: number[] }[];
  vsBaseline: unknown[];
  vsBaselineEmpty: string | null;
  pairwise: unknown[];
  pairwiseEmpty: string | null;
  critic: unknown[];
}

Deno.test("report: run selection, k columns, empty-table reasons and CSV folders", async (t) => {
  const { dir, path } = await mixedStore();
  const report = (...args: string[]) => runCli(REPORT, ...args, "--store", path);
  const json = async (...args: string[]): Promise<JsonReport> => {
    const r = await report(...args, "--format", "json");
    assert.equal(r.code, 0, r.stderr);
    // stdout is the JSON document and nothing else.
    return JSON.parse(r.stdout);
  };
  const runsOf = (r: JsonReport) => r.groups.flatMap((g) => g.runs).sort();
  try {
    await t.step("default: completed training runs only, k never averaged across", async () => {
      const r = await json();
      assert.deepEqual(runsOf(r), [
        "debate-1",
        "drmas-1",
        "drmas-2",
        "grpo-1",
        "grpo-2",
        "refine-1",
        "wide-k",
      ]);
      // wide-k was evaluated at k=16: its own columns, so no column is shared by every run.
      assert.ok(r.benchmarks.includes("math avg@4") && r.benchmarks.includes("math avg@16"));
      assert.deepEqual(r.averageOf, []);
      assert.ok(!r.benchmarks.includes("average"));
      const k4 = r.accuracy.find((c) => c.group === "drmas" && c.benchmark === "math avg@4")!;
      const k16 = r.accuracy.find((c) => c.group === "drmas" && c.benchmark === "math avg@16")!;
      assert.deepEqual([k4.n, k16.n], [2, 1]);
      assert.equal(r.pairwise.length, 0);
      assert.match(r.pairwiseEmpty!, /share no benchmark at the same k/);
      const md = await report();
      assert.equal(md.code, 0, md.stderr);
      assert.match(md.stdout, /\| drmas \| 3 \| [\d.]+ ± [\d.]+ \(n=2\) \| [\d.]+ \(n=1\) \|/);
      assert.match(md.stdout, /No column is shared by every run, so there is no average column/);
    });

    await t.step("--where over runs columns, config and run_config", async () => {
      const noWide = await json("--where", "run_id <> 'wide-k'");
      assert.ok(!runsOf(noWide).includes("wide-k"));
      assert.deepEqual(noWide.averageOf, ["gsm8k avg@4", "math avg@4"]);
      assert.equal(noWide.vsBaseline.length > 0, true);
      const seed2 = await json("--where", "seed = 2 AND config['model.name'] = 'tiny-test'");
      assert.deepEqual(runsOf(seed2), ["drmas-2", "grpo-2"]);
      const sub = await json(
        "--where",
        "run_id IN (SELECT run_id FROM run_config WHERE key = 'name' AND value = 'wide')",
      );
      assert.deepEqual(runsOf(sub), ["wide-k"]);
      const evalOnly = await json("--where", "kind = 'eval'", "--kind", "all");
      assert.deepEqual(runsOf(evalOnly), ["eval-1"]);
    });

    await t.step("--status, --kind and --name (glob or substring)", async () => {
      assert.deepEqual(runsOf(await json("--status", "failed")), ["failed-1"]);
      assert.deepEqual(runsOf(await json("--kind", "eval")), ["eval-1"]);
      assert.equal(runsOf(await json("--status", "all", "--kind", "all")).length, 9);
      assert.deepEqual(runsOf(await json("--name", "grpo-*")), ["grpo-1", "grpo-2"]);
      assert.deepEqual(runsOf(await json("--name", "GRPO")), ["grpo-1", "grpo-2"]);
      // The config name matches too: the sweep's completed runs.
      assert.deepEqual(runsOf(await json("--name", "swe")), [
        "drmas-1",
        "drmas-2",
        "grpo-1",
        "grpo-2",
      ]);
      // Named runs are taken as named; a filter given narrows them.
      assert.deepEqual(runsOf(await json("failed-1", "grpo-1")), ["failed-1", "grpo-1"]);
      assert.deepEqual(runsOf(await json("failed-1", "grpo-1", "--status", "completed")), [
        "grpo-1",
      ]);
    });

    await t.step("hidden runs (deno task runs hide) are left out unless asked for", async () => {
      const hide = await runCli("analysis/cli/runs.ts", "hide", "grpo-2", "--store", path);
      assert.equal(hide.code, 0, hide.stderr);
      assert.deepEqual(runsOf(await json("--name", "grpo-*")), ["grpo-1"]);
      assert.deepEqual(runsOf(await json("--name", "grpo-*", "--hidden")), ["grpo-1", "grpo-2"]);
      // A run named is taken as named, hidden or not.
      assert.deepEqual(runsOf(await json("grpo-2")), ["grpo-2"]);
      const unhide = await runCli("analysis/cli/runs.ts", "unhide", "grpo-2", "--store", path);
      assert.equal(unhide.code, 0, unhide.stderr);
      assert.deepEqual(runsOf(await json("--name", "grpo-*")), ["grpo-1", "grpo-2"]);
    });

    await t.step("empty 'against the baseline' tables say why", async () => {
      const one = await json("--status", "failed");
      assert.equal(one.vsBaseline.length, 0);
      assert.match(one.vsBaselineEmpty!, /only estimator=grpo is selected/);
      const apart = await json("wide-k", "grpo-1", "grpo-2", "--baseline", "grpo");
      assert.equal(apart.vsBaseline.length, 0);
      assert.match(
        apart.vsBaselineEmpty!,
        /no benchmark at the same k is shared: the baseline estimator=grpo has \[gsm8k avg@4, math avg@4\], estimator=drmas has \[gsm8k avg@16, math avg@16\]/,
      );
      const md = await report("wide-k", "grpo-1", "--baseline", "grpo");
      assert.match(md.stdout, /## Against the baseline \(grpo\)\n\n_Empty: no benchmark at the/);
      const missing = await report("--baseline", "ppo");
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /no selected run has estimator=ppo; the selected groups are/);
    });

    await t.step("critic improvement: debates only, never refine runs", async () => {
      const debate = await report("debate-1");
      assert.equal(debate.code, 0, debate.stderr);
      assert.match(debate.stdout, /## Critic improvement on evaluation debates/);
      const refine = await report("refine-1");
      assert.equal(refine.code, 0, refine.stderr);
      assert.doesNotMatch(refine.stdout, /Critic improvement/);
      assert.equal((await json("refine-1")).critic.length, 0);
    });

    await t.step("hostile or malformed --where is refused with exit 2", async () => {
      const before = await json("--status", "all", "--kind", "all");
      for (
        const [where, why] of [
          ["1=1) union select 'x' --", /Parser Error|outside its parentheses/],
          ["1=1) UNION SELECT run_id FROM runs WHERE (1=1", /outside its parentheses/],
          // It would bypass the default status and kind filters: still inside WHERE, refused.
          ["false) OR (true", /outside its parentheses/],
          ["true) ORDER BY seed LIMIT 1 --", /Parser Error|outside its parentheses/],
          ["true; drop table runs", /expected exactly one statement|Parser Error/],
          ["true); DELETE FROM runs; SELECT (1", /exactly one statement|Parser Error/],
          ["DELETE FROM runs", /Parser Error/],
          ["seed = 1 LIMIT 1", /Parser Error/],
          ["no_such_column = 1", /no_such_column/],
          ["seed = 'x'", /Conversion Error|Could not convert/],
        ] as const
      ) {
        const r = await report("--where", where);
        assert.equal(r.code, 2, `${where}: ${r.stdout}`);
        assert.match(r.stderr, /error: where "/, where);
        assert.match(r.stderr, why, where);
        assert.equal(r.stdout, "", where);
      }
      // Nothing was written: the same runs are still there.
      assert.deepEqual(runsOf(await json("--status", "all", "--kind", "all")), runsOf(before));
      const none = await report("--where", "false");
      assert.equal(none.code, 2);
      assert.match(
        none.stderr,
        /no run matches status completed, kind training, not hidden, where false; the store holds 7 completed training, 1 completed eval, 1 failed training/,
      );
      const status = await report("--status", "complete");
      assert.equal(status.code, 2);
      assert.match(status.stderr, /--status "complete": expected all or a comma-separated list/);
      const kind = await report("--kind", "training,eval");
      assert.equal(kind.code, 2);
      assert.match(kind.stderr, /--kind "training,eval": expected training, eval or all/);
    });

    await t.step("--format csv writes one CSV per table into --out DIR", async () => {
      const out = `${dir}/tables`;
      const r = await report("--where", "run_id <> 'wide-k'", "--format", "csv", "--out", out);
      assert.equal(r.code, 0, r.stderr);
      const names = [
        "runs",
        "accuracy",
        "config_differences",
        "vs_baseline",
        "vs_baseline_by_problem",
        "problem_pairs",
        "pairwise",
        "stability",
        "lemma",
        "critic",
        "cost",
      ];
      assert.deepEqual(r.stdout.trim().split("\n"), names.map((n) => `${out}/${n}.csv`));
      const full = JSON.parse(
        (await report("--where", "run_id <> 'wide-k'", "--format", "json")).stdout,
      );
      // pandas is not installed here: Python's csv module reads each file, and every row must
      // have the header's width and the table's row count.
      const python = await new Deno.Command("python3", {
        args: [
          "-c",
          `import csv, json, sys
out = {}
for name in sys.argv[2:]:
    with open(f"{sys.argv[1]}/{name}.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert all(len(r) == len(rows[0]) for r in rows), name
    out[name] = {"header": rows[0], "rows": len(rows) - 1}
print(json.dumps(out))`,
          out,
          ...names,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(python.code, 0, new TextDecoder().decode(python.stderr));
      const read = JSON.parse(new TextDecoder().decode(python.stdout));
      assert.deepEqual(read.accuracy.header, ["group", "benchmark", "n", "mean", "sem"]);
      assert.equal(read.accuracy.rows, full.accuracy.length);
      assert.equal(read.vs_baseline.rows, full.vsBaseline.length);
      assert.equal(read.pairwise.rows, full.pairwise.length);
      assert.equal(read.runs.rows, runsOf(full).length);
      assert.equal(runsOf(full).length, 6);
      assert.equal(read.critic.rows, full.critic.length);
      const bad = await report("--format", "xml");
      assert.equal(bad.code, 2);
      const onFile = await report("--format", "csv", "--out", `${out}/runs.csv`);
      assert.equal(onFile.code, 2);
      assert.match(
        onFile.stderr,
        /runs\.csv is a file, but --format csv writes one file per table/,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
