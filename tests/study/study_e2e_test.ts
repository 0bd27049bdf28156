/**
 * End to end: a two-cell grid on the smoke preset (2 seeds, 1 step) through `deno task study`,
 * its replays, its report, `--report-only` and a resumed study; the report's numbers are checked
 * against values computed here from the raw events of the store.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { tQuantileAt, twoSidedP, welchMde } from "../../analysis/stats/mod.ts";
import { runStates } from "../../study/run-state.ts";
import type { StudyResults } from "../../study/study-results.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { hashConfig, type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { randomModel, tinyConfig } from "../replay/tiny-run.ts";
import { runCli } from "../support/run-cli.ts";

const close = (a: number, b: number, what: string) =>
  assert.ok(Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)), `${what}: ${a} vs ${b}`);

const study = (args: string[]) => runCli("study/cli/study.ts", ...args);

async function events(store: string, runId: string): Promise<StoredEvent<NewEvent>[]> {
  await using s = await openStore(store, { create: false });
  const out: StoredEvent<NewEvent>[] = [];
  for await (const e of s.readStream(runId)) out.push(e as StoredEvent<NewEvent>);
  return out;
}

/** Mean, SEM and 95% CI of per-run values, computed the textbook way. */
function describe(xs: number[]) {
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  const variance = xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1);
  const sem = Math.sqrt(variance / n);
  const half = tQuantileAt(0.975, n - 1) * sem;
  return { mean, variance, sem, ci: [mean - half, mean + half] };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

Deno.test("run states: absent, stopped before the end, complete", async () => {
  const tmp = await Deno.makeTempDir();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    const model = await randomModel(tmp);
    const path = join(tmp, "events.sqlite");
    const config = tinyConfig(model, path, 2);
    await using store = await openStore(path);
    await runTraining(config, { store, runtime, runId: "stopped", lastStep: 0 });
    await runTraining(config, { store, runtime, runId: "done" });
    const states = await runStates(store, ["absent", "stopped", "done"]);
    assert.equal(states.get("absent")?.kind, "absent");
    const stopped = states.get("stopped")!;
    assert.equal(stopped.kind, "incomplete");
    assert.equal(stopped.kind === "incomplete" && stopped.lastEvent, "checkpoint.saved");
    const done = states.get("done")!;
    assert.equal(done.kind, "complete");
    assert.equal(done.kind === "complete" && done.head.version, await store.streamVersion("done"));
  } finally {
    await runtime.close();
  }
});

Deno.test("study end to end: runs, replays, report numbers from the raw events", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-study-" });
  const cell = (name: string, extra: Record<string, unknown> = {}) => ({
    extends: "smoke",
    name,
    group_size: 4,
    sampling: { max_tokens: 32 },
    evaluation: { n_samples: 4 },
    ...extra,
  });
  await Deno.writeTextFile(join(dir, "a.json"), JSON.stringify(cell("a")));
  await Deno.writeTextFile(
    join(dir, "b.json"),
    JSON.stringify(cell("b", { estimator: { kind: "grpo" } })),
  );
  const grid = join(dir, "grid.json");
  await Deno.writeTextFile(
    grid,
    JSON.stringify({
      title: "Tiny study",
      seeds: 3,
      // a and b differ only in the estimator: one start run (a's config, 0 steps) for both.
      cells: [
        { id: "a", title: "smoke, Dr. MAS", config: "a.json", start: "a" },
        { id: "b", title: "smoke, GRPO", config: "b.json", start: "a" },
      ],
      comparisons: [{
        id: "a-vs-b",
        title: "A vs B",
        baseline: "b",
        cells: ["a"],
        charts: ["grad-norm", "lemma-multiplier"],
        claims: [
          { cell: "a", metric: "avg@k", expect: "higher", paper: "claim one" },
          { cell: "a", metric: "grad-norm-max-over-median", expect: "lower", paper: "claim two" },
          { cell: "b", metric: "lemma-multiplier", expect: "not-one", paper: "claim three" },
        ],
      }],
    }),
  );
  const store = join(dir, "study.sqlite");
  const out = join(dir, "report");
  const args = ["--grid", grid, "--seeds", "2", "--steps", "1", "--store", store, "--out", out];

  const first = await study([...args, "--jobs", "2"]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stderr, /5 runs planned; 0 complete in the store, 0 to resume, 5 to train/);
  assert.match(
    first.stderr,
    /\[1\/5\] a start: training run a-start-[0-9a-f]{8}\n/,
    "starts first",
  );
  assert.match(first.stderr, /\[a s0\] train 1\/1/, "the children's progress lines");
  assert.match(first.stdout, /runs: 5 trained, 0 resumed, 0 already complete, 0 failed/);
  assert.match(first.stdout, /replays: 2 of 2 identical/);
  const results = JSON.parse(await Deno.readTextFile(join(out, "study.json"))) as StudyResults;
  const readme = await Deno.readTextFile(join(out, "README.md"));

  await t.step("runs: ids from the recorded config, seeds 0 and 1, one step", async () => {
    assert.deepEqual(results.cells.map((c) => c.id), ["a", "b"]);
    for (const c of results.cells) {
      assert.deepEqual(c.runs.map((r) => r.seed), [0, 1]);
      assert.deepEqual(c.pending, []);
      for (const r of c.runs) {
        const started = (await events(store, r.runId))[0];
        assert.equal(started.type, "run.started");
        const { store: _store, ...identity } = started.data.config as Record<string, unknown>;
        assert.equal(r.runId, `${c.id}-s${r.seed}-${hashConfig(identity).slice(0, 8)}`);
        assert.equal(started.data.seed, r.seed);
        assert.equal((started.data.config as { steps: number }).steps, 1);
      }
    }
  });

  await t.step("accuracy per run and per cell, recomputed from evaluation events", async () => {
    const perCell = new Map<string, { avg: number[]; pass: number[] }>();
    for (const c of results.cells) {
      const avg: number[] = [];
      const pass: number[] = [];
      for (const r of c.runs) {
        const evals = (await events(store, r.runId)).filter((e) =>
          e.type === "evaluation.completed"
        );
        const last = evals.at(-1)!;
        assert.equal(last.type, "evaluation.completed");
        const problems = (last.data as { problems: { n: number; c: number }[] }).problems;
        const k = (last.data as { samplesPerProblem: number }).samplesPerProblem;
        assert.equal(k, 4);
        avg.push(problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length);
        // pass@k with k = n samples: a problem passes when any sample is right.
        pass.push(problems.filter((p) => p.c > 0).length / problems.length);
      }
      c.runs.forEach((r, i) => {
        close(r.avg, avg[i], `${r.runId} avg@4`);
        close(r.pass, pass[i], `${r.runId} pass@4`);
      });
      const d = describe(avg);
      close(c.accuracy.avg.mean!, d.mean, `${c.id} mean`);
      close(c.accuracy.avg.sem!, d.sem, `${c.id} sem`);
      if (d.sem > 0) {
        close(c.accuracy.avg.ci![0], d.ci[0], `${c.id} ci`);
        close(c.accuracy.avg.ci![1], d.ci[1], `${c.id} ci`);
      }
      assert.ok(readme.includes(`| ${c.id} | 2 | ${(100 * d.mean).toFixed(2)} ± `), c.id);
      perCell.set(c.id, { avg, pass });
    }
    // The avg@k claim: Welch's t of a minus b, by hand.
    const claim = results.comparisons[0].claims.find((c) => c.metric === "avg@k")!;
    const a = describe(perCell.get("a")!.avg);
    const b = describe(perCell.get("b")!.avg);
    const se = Math.sqrt(a.variance / 2 + b.variance / 2);
    close(claim.test!.diff, a.mean - b.mean, "welch diff");
    close(claim.test!.se, se, "welch se");
    if (se > 0) {
      const tStat = (a.mean - b.mean) / se;
      const df = se ** 4 / ((a.variance / 2) ** 2 + (b.variance / 2) ** 2);
      close(claim.test!.t, tStat, "welch t");
      close(claim.test!.df, df, "welch df");
      close(claim.test!.p, twoSidedP(tStat, df), "welch p");
      assert.notEqual(claim.verdict, "not testable");
    }
    // Its power: the minimum detectable difference at the study's 2 seeds, from these spreads.
    if (a.variance > 0 || b.variance > 0) {
      const design = { sd1: Math.sqrt(a.variance), n1: 2, sd2: Math.sqrt(b.variance), n2: 2 };
      close(claim.power.mde!, welchMde(design, results.alpha, results.power), "mde");
      assert.equal(claim.power.seeds, 2);
      assert.ok(results.cells.every((c) => typeof c.problems === "number" && c.problems > 0));
      assert.ok(readme.includes("## Power"));
    } else assert.match(claim.power.note!, /no spread/);
  });

  await t.step(
    "start runs: the initial team evaluated once, at step 0, shared by a and b",
    async () => {
      const [a, b] = results.cells;
      assert.equal(a.start!.runId, b.start!.runId);
      const events0 = await events(store, a.start!.runId);
      const started = events0[0];
      assert.equal(started.type, "run.started");
      assert.equal((started.data.config as { steps: number }).steps, 0);
      assert.equal(started.data.seed, 0);
      const evals = events0.filter((e) => e.type === "evaluation.completed");
      assert.equal(evals.length, 1);
      assert.equal((evals[0].data as { step: number }).step, 0);
      assert.equal(events0.at(-1)!.type, "run.completed");
      const problems = (evals[0].data as { problems: { n: number; c: number }[] }).problems;
      close(
        a.start!.avg!,
        problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length,
        "start avg",
      );
      // Every run, start run included, on the same problems: one benchmark hash.
      const hashes = new Set(
        [a.start!, ...results.cells].flatMap((x) =>
          x.benchmarks.flatMap((bm) => bm.sets.map((set) => set.sha256))
        ),
      );
      assert.equal(hashes.size, 1);
      assert.equal(results.comparisons[0].claims[0].sameBenchmark, true);
      assert.equal(results.time.startRuns, 1);
      assert.match(
        readme,
        /\| b \| smoke \(none\) \| validation [0-9a-f]{12} \(4 problems\) \| a's \|/,
      );
    },
  );

  await t.step("per-agent gradient norms, recomputed from gradient steps", async () => {
    for (const c of results.cells) {
      assert.ok(c.agents.length > 0, `${c.id} has no agents`);
      for (const agent of c.agents) {
        const ratios: number[] = [];
        let zero = 0;
        for (const r of c.runs) {
          const norms = (await events(store, r.runId))
            .filter((e) => e.type === "gradient_step.applied")
            .map((e) =>
              (e.data as { agentGradNorms: Record<string, number> })
                .agentGradNorms[agent.agent]
            )
            .filter((n) => n !== undefined);
          zero += norms.filter((n) => n === 0).length;
          const informative = norms.filter((n) => n !== 0 && Number.isFinite(n));
          if (informative.length > 0) {
            const ratio = Math.max(...informative) / median(informative);
            if (Number.isFinite(ratio)) ratios.push(ratio);
          }
          const series = agent.gradNorms.find((s) => s.seed === r.seed)!;
          assert.equal(series.values.length, norms.length);
        }
        assert.equal(agent.zeroSteps, zero, `${c.id} ${agent.agent} zero steps`);
        assert.equal(agent.maxOverMedian.samples.length, ratios.length);
        agent.maxOverMedian.samples.forEach((x, i) => close(x, ratios[i], "max/median"));
      }
    }
  });

  await t.step("replays: one identical run per cell, all its events compared", async () => {
    const records = JSON.parse(await Deno.readTextFile(join(out, "replays.json")));
    assert.deepEqual(records.map((r: { cell: string }) => r.cell), ["a", "b"]);
    for (const r of records) {
      assert.equal(r.ok, true);
      assert.match(r.runId, /-s0-/);
      await using s = await openStore(store, { create: false });
      assert.equal(r.compared, (await s.streamVersion(r.runId)) - 1);
    }
    assert.deepEqual(results.replays.map((r) => r.status), ["identical", "identical"]);
    assert.match(readme, /\| a \| a-s0-[0-9a-f]{8} \| identical through step 0 \(exact, cpu\)/);
  });

  await t.step("files: page, numbers, figures; wall time and hardware stated", () => {
    const names = [...Deno.readDirSync(out)].map((e) => e.name).sort();
    for (const f of ["README.md", "accuracy.svg", "replays.json", "study.json"]) {
      assert.ok(names.includes(f), names.join());
    }
    assert.ok(names.includes("a-vs-b-grad-norm-solver.svg"), names.join());
    for (const f of names.filter((n) => n.endsWith(".svg"))) {
      assert.match(readme, new RegExp(`\\]\\(${f.replaceAll(".", "\\.")}\\)`));
    }
    assert.match(readme, /## Results against the papers/);
    assert.match(readme, /logical cores/);
    assert.match(readme, /Deno 2\.\d+\.\d+; onnxruntime onnxruntime-node@/);
    assert.equal(results.time.runs, 4);
    assert.ok(results.time.summedSeconds > 0 && results.time.spanSeconds > 0);
  });

  await t.step("--report-only rebuilds the same report from the store", async () => {
    const before = Object.fromEntries(
      [...Deno.readDirSync(out)].map((e) => [e.name, Deno.readTextFileSync(join(out, e.name))]),
    );
    const again = await study([...args, "--report-only"]);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /training|replaying/);
    for (const [name, text] of Object.entries(before)) {
      assert.equal(Deno.readTextFileSync(join(out, name)), text, name);
    }
  });

  await t.step(
    "a second study finds its runs and replays complete and trains nothing",
    async () => {
      const again = await study([...args, "--jobs", "1"]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /runs: 0 trained, 0 resumed, 5 already complete/);
      assert.match(again.stderr, /2 current from an earlier check, 0 to replay/);
      assert.equal(await Deno.readTextFile(join(out, "README.md")), readme);
    },
  );

  await t.step("--report-only on a store without the grid's runs fails clearly", async () => {
    const other = await study([
      ...args.slice(0, 4),
      "--steps",
      "2",
      "--store",
      store,
      "--out",
      join(dir, "other"),
      "--report-only",
    ]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /holds none of the grid's 4 planned runs/);
  });
});
