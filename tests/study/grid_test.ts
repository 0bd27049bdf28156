import assert from "node:assert/strict";
import { join } from "node:path";
import { mergeConfig, presetInput } from "../../engine/config/mod.ts";
import { oneSampleTest, verdictOf, welchTest } from "../../study/claims.ts";
import { GridError } from "../../study/grid-error.ts";
import { loadGrid, selectCells } from "../../study/load-grid.ts";
import { MissingModelError, missingModels } from "../../study/model-check.ts";
import {
  planRuns,
  planStarts,
  runIdFor,
  runLabel,
  startRunIdFor,
  startsOf,
} from "../../study/plan-runs.ts";
import { runCli } from "../support/run-cli.ts";

const COMMITTED = new URL("../../study/grid.json", import.meta.url).pathname;
const STUDY_CLI = new URL("../../study/cli/study.ts", import.meta.url).pathname;
const DENO_JSON = new URL("../../deno.json", import.meta.url).pathname;

async function tempGrid(
  grid: Record<string, unknown>,
  configs: Record<string, unknown> = {},
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-grid-" });
  for (const [name, body] of Object.entries(configs)) {
    await Deno.writeTextFile(join(dir, name), JSON.stringify(body));
  }
  const file = join(dir, "grid.json");
  await Deno.writeTextFile(file, JSON.stringify(grid));
  return file;
}

/** The keys of a GridError's issues, for compact assertions. */
async function issueKeys(file: string): Promise<string[]> {
  try {
    await loadGrid(file);
  } catch (err) {
    assert.ok(err instanceof GridError, String(err));
    return err.issues.map((i) => i.key);
  }
  assert.fail("expected a GridError");
}

const SMOKE = { extends: "smoke" };
const DEBATE = { extends: "debate-mada" };

Deno.test("the committed grid loads: cells, comparisons, sizes within the budget", async () => {
  const grid = await loadGrid(COMMITTED);
  assert.equal(grid.seeds, 4);
  assert.deepEqual(grid.cells.map((c) => c.id), [
    "refine-grpo",
    "refine-drmas",
    "refine-grpo-shared",
    "refine-drmas-shared",
    "refine-drmas-hetero",
    "refine-drmas-hetero-swap",
    "refine-grpo-penalty",
    "refine-drmas-penalty",
    "search-grpo",
    "search-drmas",
    "search-drmas-hetero",
    "debate-mada",
    "debate-grpo",
    "debate-mada-r1",
    "debate-mada-r3",
  ]);
  // Start runs: one per initial team (the shared ones differ in estimator, penalty or sharing).
  const starts = await planStarts(grid.cells, { store: "s.sqlite" });
  assert.deepEqual(starts.map((s) => [s.cell.id, s.cells]), [
    ["refine-grpo", [
      "refine-grpo",
      "refine-drmas",
      "refine-grpo-shared",
      "refine-drmas-shared",
      "refine-grpo-penalty",
      "refine-drmas-penalty",
    ]],
    ["refine-drmas-hetero", ["refine-drmas-hetero"]],
    ["refine-drmas-hetero-swap", ["refine-drmas-hetero-swap"]],
    ["search-grpo", ["search-grpo", "search-drmas"]],
    ["search-drmas-hetero", ["search-drmas-hetero"]],
    ["debate-mada", ["debate-mada", "debate-grpo"]],
    ["debate-mada-r1", ["debate-mada-r1"]],
    ["debate-mada-r3", ["debate-mada-r3"]],
  ]);
  // The earlier study the report compares with: v2, moved beside this one.
  assert.equal(grid.previous?.title, "v2");
  assert.equal(grid.previous?.results, "../docs/study/v2/study.json");
  assert.equal(grid.comparisons.length, 8);
  const cell = (id: string) => grid.cells.find((c) => c.id === id)!.config;
  assert.equal(cell("refine-grpo").estimator.kind, "grpo");
  assert.equal(cell("refine-drmas").estimator.kind, "dr-mas");
  assert.equal(cell("refine-drmas-shared").worker_groups.length, 1);
  assert.equal(cell("refine-drmas").worker_groups.length, 2);
  assert.equal(cell("debate-mada").workflow.kind, "debate");
  assert.deepEqual(
    ["debate-mada-r1", "debate-mada", "debate-mada-r3"].map((id) => {
      const w = cell(id).workflow;
      return w.kind === "debate" ? [w.rounds, w.critics] : null;
    }),
    [[1, 0], [2, 3], [3, 3]],
  );
  // Evaluation sized by the power analysis: more problems, 4 samples each.
  const evaluated = (id: string) => {
    const c = cell(id);
    const problems = c.tasks.kind === "math-files" ? null : c.tasks.splits.validation;
    return [problems, c.evaluation.n_samples, c.evaluation.every_steps];
  };
  for (const c of grid.cells) {
    const want = c.id.startsWith("refine")
      ? [128, 4, 0]
      : c.id.startsWith("search")
      ? [64, 4, 0]
      : [32, 4, 0];
    assert.deepEqual(evaluated(c.id), want, c.id);
  }
  // Search cells: the preset's five mini-batch updates (Dr. MAS's run_search.sh), GRPO vs Dr. MAS.
  assert.equal(cell("search-grpo").estimator.kind, "grpo");
  assert.equal(cell("search-drmas").estimator.kind, "dr-mas");
  // A cell that names its estimator's kind replaces the preset's whole estimator: the GRPO cell
  // states the preset's sigma, so that the comparison differs in the baseline alone.
  assert.equal(cell("search-grpo").estimator.sigma, cell("search-drmas").estimator.sigma);
  for (const id of ["search-grpo", "search-drmas", "search-drmas-hetero"]) {
    assert.equal(cell(id).updates.mini_batches, 5, id);
    assert.equal(cell(id).worker_groups.length, 3, id);
    // Off the ceiling: three-hop questions only (with two-hop ones among them the search3 team
    // started at 62% avg@4), with room for a three-hop reply's copied facts.
    const tasks = cell(id).tasks;
    assert.deepEqual(
      tasks.kind === "synthetic-search" && [tasks.min_hops, tasks.max_hops],
      [3, 3],
      id,
    );
    assert.equal(cell(id).sampling.max_tokens, 192, id);
  }
  // The mechanism cells differ from the refine cells only in the invalid-action penalty.
  for (
    const [penalty, base] of [["refine-grpo-penalty", "refine-grpo"], [
      "refine-drmas-penalty",
      "refine-drmas",
    ]]
  ) {
    assert.equal(cell(penalty).rewards.invalid_action_penalty, 1);
    assert.equal(cell(base).rewards.invalid_action_penalty, 0.1);
    const strip = (c: ReturnType<typeof cell>) =>
      JSON.parse(JSON.stringify(mergeConfig(c, { name: null, rewards: null })));
    assert.deepEqual(strip(cell(penalty)), strip(cell(base)));
  }
});

Deno.test("the heterogeneous cells differ from their Dr. MAS cell only in one side's models", async () => {
  const grid = await loadGrid(COMMITTED);
  const config = (id: string) => grid.cells.find((c) => c.id === id)!.config;
  const models = (id: string) => Object.fromEntries(config(id).agents.map((a) => [a.id, a.model]));
  const small = "study/models/small-v2";
  assert.deepEqual(models("refine-drmas-hetero-swap"), { solver: "embedded", verifier: small });
  // The search team's models learned three-hop lookups (grid.json's models).
  const search = "study/models/search3";
  assert.deepEqual(models("search-drmas"), {
    verifier: search,
    searcher: search,
    answerer: search,
  });
  assert.deepEqual(models("search-drmas-hetero"), {
    verifier: search,
    searcher: "study/models/small-search3",
    answerer: "study/models/small-search3",
  });
  const strip = (c: ReturnType<typeof config>) =>
    JSON.parse(
      JSON.stringify(mergeConfig(c, { name: null })),
      (k, v) => k === "model" ? undefined : v,
    );
  for (
    const [hetero, base] of [
      ["refine-drmas-hetero-swap", "refine-drmas"],
      ["search-drmas-hetero", "search-drmas"],
    ]
  ) assert.deepEqual(strip(config(hetero)), strip(config(base)), hetero);
  // The presets' prompts, so the pretrained models see what they were trained on.
  for (
    const [hetero, preset] of [["refine-drmas-hetero-swap", "refine-drmas"], [
      "search-drmas-hetero",
      "search-drmas",
    ]]
  ) {
    const prompts = (presetInput(preset).agents as { prompt: string }[]).map((a) => a.prompt);
    assert.deepEqual(config(hetero).agents.map((a) => a.prompt), prompts, hetero);
  }
  // The small model's recipe starts from the v1 small model, which stays declared.
  assert.match(grid.models[small], /--init study\/models\/small --corpus arithmetic/);
  assert.match(grid.models[small], /--out study\/models\/small-v2$/);
  assert.ok(grid.models["study/models/small"]);
  assert.match(
    grid.models[search],
    /--init adapters\/model\/embedded .*--max-hops 3 .*--out study\/models\/search3$/,
  );
  assert.match(
    grid.models["study/models/small-search3"],
    /--init study\/models\/small-v2 .*--max-hops 3 .*--out study\/models\/small-search3$/,
  );
});

Deno.test("grid validation names every problem with its key", async (t) => {
  await t.step("schema: unknown key with a hint, bad id, missing cells", async () => {
    const file = await tempGrid({ title: "t", cell: [], comparisons: [{ id: "Bad" }] });
    const keys = await issueKeys(file);
    assert.ok(keys.includes("cell"), keys.join());
    assert.ok(keys.includes("cells"), keys.join());
    assert.ok(keys.includes("comparisons[0].id"), keys.join());
    const err = await loadGrid(file).catch((e) => e);
    assert.match(err.message, /did you mean cells\?/);
  });

  await t.step("cross-references: unknown cells, claims outside, wrong expectations", async () => {
    const file = await tempGrid({
      title: "t",
      cells: [
        { id: "a", title: "A", config: "a.json" },
        { id: "b", title: "B", config: "b.json" },
        { id: "a", title: "A again", config: "a.json" },
      ],
      comparisons: [{
        id: "x",
        title: "X",
        baseline: "zz",
        cells: ["b", "b"],
        claims: [
          { cell: "c", metric: "avg@k", expect: "higher", paper: "p" },
          { cell: "b", metric: "avg@k", expect: "not-one", paper: "p" },
          { cell: "b", metric: "lemma-multiplier", expect: "higher", paper: "p" },
          { cell: "b", against: "b", metric: "pass@k", expect: "higher", paper: "p" },
          { cell: "b", against: "a", metric: "critic-improvement", expect: "higher", paper: "p" },
          { cell: "b", agent: "solver", metric: "avg@k", expect: "higher", paper: "p" },
          {
            cell: "b",
            agent: "critic",
            metric: "lemma-multiplier",
            expect: "above-one",
            paper: "p",
          },
          {
            cell: "b",
            agent: "solver",
            metric: "lemma-multiplier",
            expect: "above-one",
            paper: "p",
          },
        ],
      }],
    }, { "a.json": SMOKE, "b.json": SMOKE });
    const keys = await issueKeys(file);
    for (
      const key of [
        "cells",
        "comparisons[0].baseline",
        "comparisons[0].claims[0].cell",
        "comparisons[0].claims[1].expect",
        "comparisons[0].claims[2].expect",
        "comparisons[0].claims[3].against",
        "comparisons[0].claims[4].against",
        "comparisons[0].claims[4].metric",
        "comparisons[0].claims[5].agent",
        "comparisons[0].claims[6].agent",
      ]
    ) assert.ok(keys.includes(key), `${key} in ${keys.join(", ")}`);
    // An agent the cell has, on a per-agent metric, with a one-cell expectation: no issue.
    assert.ok(!keys.some((k) => k.startsWith("comparisons[0].claims[7]")), keys.join(", "));
    const err = await loadGrid(file).catch((e) => e);
    assert.match(err.message, /an agent of cell b \(solver, verifier\)/);
    assert.match(err.message, /no agent for metric avg@k/);
  });

  await t.step("a cell's config errors are folded in under cells[i].config", async () => {
    const file = await tempGrid({
      title: "t",
      cells: [
        { id: "a", title: "A", config: "a.json" },
        { id: "b", title: "B", config: "missing.json" },
      ],
    }, { "a.json": { ...SMOKE, group_sise: 3 } });
    const err = await loadGrid(file).catch((e) => e);
    assert.ok(err instanceof GridError);
    assert.deepEqual(err.issues.map((i) => i.key), ["cells[0].config", "cells[1].config"]);
    assert.match(err.message, /group_sise/);
    assert.match(err.message, /missing\.json/);
  });

  await t.step("a model other than embedded must be declared with its command", async () => {
    const file = await tempGrid({
      title: "t",
      cells: [{ id: "a", title: "A", config: "a.json" }],
    }, {
      "a.json": mergeConfig(presetInput("smoke"), {
        agents: (presetInput("smoke").agents as object[]).map((a) => ({ ...a, model: "m/x" })),
      }),
    });
    assert.deepEqual(await issueKeys(file), ['models["m/x"]']);
  });

  await t.step("critic-improvement needs debates with critics", async () => {
    const file = await tempGrid({
      title: "t",
      cells: [
        { id: "d", title: "D", config: "d.json" },
        { id: "r", title: "R", config: "r.json" },
      ],
      comparisons: [{
        id: "x",
        title: "X",
        baseline: "r",
        cells: ["d"],
        claims: [{ cell: "d", metric: "critic-improvement", expect: "higher", paper: "p" }],
      }],
    }, { "d.json": DEBATE, "r.json": SMOKE });
    const err = await loadGrid(file).catch((e) => e);
    assert.deepEqual(err.issues.map((i: { key: string }) => i.key), [
      "comparisons[0].claims[0].metric",
    ]);
    assert.match(err.message, /cell r measures/);
  });

  await t.step("--only names grid cells", async () => {
    const grid = await loadGrid(COMMITTED);
    assert.deepEqual(selectCells(grid, "debate-grpo, refine-grpo").map((c) => c.id), [
      "refine-grpo",
      "debate-grpo",
    ]);
    assert.throws(() => selectCells(grid, "refine-grpo,nope"), GridError);
    assert.throws(() => selectCells(grid, ","), GridError);
  });
});

Deno.test("start runs: a cell names the cell whose initial team it shares, checked", async (t) => {
  const cells = (starts: Record<string, string>) =>
    ["a", "b", "c", "d"].map((id) => ({
      id,
      title: id,
      config: `${id}.json`,
      ...(starts[id] === undefined ? {} : { start: starts[id] }),
    }));
  const configs = {
    "a.json": SMOKE,
    // b differs from a in estimator, penalty and weight sharing: the same initial team.
    "b.json": {
      ...SMOKE,
      estimator: { kind: "grpo" },
      rewards: { invalid_action_penalty: 1 },
      agent_to_wg: "shared",
    },
    // c asks harder problems with longer answers: another start.
    "c.json": { ...SMOKE, tasks: { difficulty: 3 }, sampling: { max_tokens: 24 } },
    "d.json": DEBATE,
  };

  await t.step("unknown cell, a cell that runs no start of its own, another team", async () => {
    const file = await tempGrid({
      title: "t",
      cells: cells({ a: "zz", b: "c", d: "b" }),
    }, configs);
    const err = await loadGrid(file).catch((e) => e);
    assert.ok(err instanceof GridError, String(err));
    assert.deepEqual(err.issues.map((i: { key: string }) => i.key), [
      "cells[0].start",
      "cells[1].start",
      "cells[3].start",
    ]);
    assert.match(err.message, /a cell id \(a, b, c, d\)/);
    assert.match(err.message, /c has no start; name the cell whose run it shares/);
    assert.match(err.message, /b shares c's/);
    const other = await tempGrid({ title: "t", cells: cells({ a: "a", c: "a" }) }, configs);
    const differ = await loadGrid(other).catch((e) => e);
    assert.ok(differ instanceof GridError, String(differ));
    assert.match(
      differ.message,
      /a's config differs from c's in tasks\.difficulty, sampling\.max_tokens\); name "c" to run its own/,
    );
  });

  await t.step(
    "planned: one per cell that names itself, seed 0, 0 steps, ids by config",
    async () => {
      const file = await tempGrid(
        { title: "t", cells: cells({ a: "a", b: "a", d: "d" }) },
        configs,
      );
      const grid = await loadGrid(file);
      assert.deepEqual(grid.cells.map((c) => c.preset), ["smoke", "smoke", "smoke", "debate-mada"]);
      assert.deepEqual(grid.cells[1].ownKeys, [
        "estimator.kind",
        "rewards.invalid_action_penalty",
        "agent_to_wg",
      ]);
      const starts = await planStarts(grid.cells, { store: "a.sqlite", device: "cpu" });
      assert.deepEqual(starts.map((s) => [s.kind, s.cell.id, s.cells, s.seed]), [
        ["start", "a", ["a", "b"], 0],
        ["start", "d", ["d"], 0],
      ]);
      assert.equal(starts[0].config.steps, 0);
      assert.equal(starts[0].config.seed, 0);
      assert.equal(starts[0].config.runtime.device, "cpu", "--device applies");
      assert.match(starts[0].runId, /^a-start-[0-9a-f]{8}$/);
      assert.equal(starts[0].runId, startRunIdFor("a", starts[0].config));
      const elsewhere = await planStarts(grid.cells, { store: "/b.sqlite", device: "cpu" });
      assert.deepEqual(elsewhere.map((s) => s.runId), starts.map((s) => s.runId));
      // --only b runs a's start run, which b shares; c declares none.
      assert.deepEqual(startsOf(starts, selectCells(grid, "b")).map((s) => s.cell.id), ["a"]);
      assert.deepEqual(startsOf(starts, selectCells(grid, "c")), []);
      assert.equal(runLabel(starts[0]), "a start");
      const [train] = await planRuns(grid.cells, { seeds: 1, store: "a.sqlite" });
      assert.equal(train.kind, "train");
      assert.equal(runLabel(train), "a seed 0");
    },
  );
});

Deno.test("missing model directories are named with the command that makes them", async () => {
  const grid = await loadGrid(COMMITTED);
  const cwd = await Deno.makeTempDir();
  const missing = await missingModels(grid, grid.cells, cwd);
  const search = ["search-grpo", "search-drmas", "search-drmas-hetero"];
  assert.deepEqual(
    missing,
    [
      ["study/models/small-v2", ["refine-drmas-hetero", "refine-drmas-hetero-swap"]],
      ["study/models/search3", search],
      ["study/models/small-search3", ["search-drmas-hetero"]],
    ].map(([model, cells]) => ({ model, cells, command: grid.models[model as string] })),
  );
  assert.match(new MissingModelError(missing).message, /deno task pretrain --size small/);
  assert.deepEqual(await missingModels(grid, selectCells(grid, "refine-grpo"), cwd), []);
  const dir = join(cwd, "study/models/small-v2");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "config.json"), "{}");
  assert.equal((await missingModels(grid, grid.cells, cwd)).length, 3, "weights still missing");
  await Deno.writeTextFile(join(dir, "model.safetensors"), "");
  assert.deepEqual(
    (await missingModels(grid, grid.cells, cwd)).map((m) => m.model),
    ["study/models/search3", "study/models/small-search3"],
  );
});

Deno.test("run ids: a function of cell, seed and config, not of the store path", async () => {
  const grid = await loadGrid(COMMITTED);
  const cells = selectCells(grid, "refine-grpo,refine-drmas");
  const a = await planRuns(cells, { seeds: 2, store: "a.sqlite" });
  const b = await planRuns(cells, { seeds: 2, store: "/elsewhere/b.sqlite" });
  assert.deepEqual(a.map((r) => r.runId), b.map((r) => r.runId));
  assert.deepEqual(a.map((r) => [r.cell.id, r.seed]), [
    ["refine-grpo", 0],
    ["refine-drmas", 0],
    ["refine-grpo", 1],
    ["refine-drmas", 1],
  ]);
  assert.match(a[0].runId, /^refine-grpo-s0-[0-9a-f]{8}$/);
  assert.equal(a[0].runId, runIdFor("refine-grpo", a[0].config));
  assert.equal(new Set(a.map((r) => r.runId)).size, 4);
  const shorter = await planRuns(cells, { seeds: 1, steps: 3, store: "a.sqlite" });
  assert.notEqual(shorter[0].runId, a[0].runId, "--steps makes other runs");
  assert.equal(shorter[0].config.steps, 3);
});

Deno.test("claim verdicts: direction, significance, not-lower, one-sample test", () => {
  assert.equal(verdictOf("higher", { diff: 0.1, p: 0.01 }, 0.05), "agrees");
  assert.equal(verdictOf("higher", { diff: -0.1, p: 0.01 }, 0.05), "disagrees");
  assert.equal(verdictOf("higher", { diff: 0.1, p: 0.2 }, 0.05), "inconclusive");
  assert.equal(verdictOf("lower", { diff: -2, p: 0.001 }, 0.05), "agrees");
  assert.equal(verdictOf("not-lower", { diff: -0.01, p: 0.5 }, 0.05), "agrees");
  assert.equal(verdictOf("not-lower", { diff: -0.2, p: 0.01 }, 0.05), "disagrees");
  assert.equal(verdictOf("not-one", { diff: 0.3, p: 0.01 }, 0.05), "agrees");
  assert.equal(verdictOf("not-one", { diff: -0.3, p: 0.01 }, 0.05), "agrees");
  assert.equal(verdictOf("above-one", { diff: 0.3, p: 0.01 }, 0.05), "agrees");
  assert.equal(verdictOf("above-one", { diff: -0.3, p: 0.01 }, 0.05), "disagrees");
  assert.equal(verdictOf("above-one", { diff: 0.3, p: 0.2 }, 0.05), "inconclusive");
  assert.equal(verdictOf("higher", null, 0.05), "not testable");
  assert.equal(verdictOf("higher", { diff: 0, p: NaN }, 0.05), "not testable");
  // One-sample t: mean 1.3, sd 0.1, n 3 -> t = 0.3 / (0.1 / sqrt 3) = 5.196, df 2, p = 0.0351.
  const t = oneSampleTest([1.2, 1.3, 1.4], 1)!;
  assert.ok(Math.abs(t.diff - 0.3) < 1e-12);
  assert.ok(Math.abs(t.t - 5.196152422706632) < 1e-9);
  assert.equal(t.df, 2);
  assert.ok(Math.abs(t.p - 0.035098) < 1e-5, String(t.p));
  assert.equal(oneSampleTest([1.5], 1), null);
  assert.equal(welchTest([1], [2, 3]), null);
});

Deno.test("study CLI: usage errors exit 2, a missing model stops it before anything runs", async () => {
  for (
    const args of [["--seeds", "0"], ["--only", "nope"], ["--report-only", "--only", "a"], [
      "--device",
      "tpu",
    ]]
  ) {
    const r = await runCli("study/cli/study.ts", "--grid", COMMITTED, ...args);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, /usage: deno task study/);
  }
  const cwd = await Deno.makeTempDir();
  const store = join(cwd, "study.sqlite");
  // From a directory of the user's: the model folder is still named from the repository root.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "-A", `--config=${DENO_JSON}`, STUDY_CLI, "--grid", COMMITTED, "--store"]
      .concat([store, "--out", join(cwd, "out")]),
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const r = { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /model directory study\/models\/small-v2 \(cells refine-drmas-hetero/);
  assert.match(r.stderr, /deno task pretrain --size small .* --out study\/models\/small-v2\n/);
  await assert.rejects(Deno.stat(store), Deno.errors.NotFound);
});
