/**
 * The sql, export and report tasks as a user runs them, against a real SQLite store filled with
 * generated runs. Report figures are recomputed here from the generated events.
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import type { NewEvent } from "../../events/mod.ts";
import { EXPORTED } from "../../analysis/projections/schema.ts";
import { runSpec, tempStore } from "./fixtures/fill-store.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { runCli } from "../support/run-cli.ts";

const root = new URL("../../", import.meta.url).pathname;

/**
 * `deno task SCRIPT ARGS` of analysis/cli: in this process through runCli, or as a child when a
 * test types `stdin` into it (the sql prompt).
 */
async function task(script: string, args: string[], stdin?: string) {
  if (stdin === undefined) return await runCli(`analysis/cli/${script}.ts`, ...args);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${root}analysis/cli/${script}.ts`, ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(stdin));
  await w.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** A store with two estimators × three seeds; returns its path and each run's events. */
async function filledStore() {
  const { store, dir } = await tempStore();
  const events = new Map<string, NewEvent[]>();
  for (const [estimator, accuracy] of [["grpo", 0.45], ["dr-mas", 0.7]] as const) {
    for (const seed of [1, 2, 3]) {
      const spec = runSpec({
        runId: `${estimator}-${seed}`,
        estimator,
        seed,
        accuracy,
        steps: 1,
        evalProblems: 8,
      });
      events.set(spec.runId, await writeFakeRun(store, spec));
    }
  }
  await store.close();
  return { dir, path: `${dir}/events.sqlite`, events };
}

Deno.test("sql, export and report tasks on one generated store", async (t) => {
  const { dir, path, events } = await filledStore();
  try {
    await t.step("sql: formats, refused write, malformed SQL, parquet, prompt", async () => {
      const json = await task("sql", [
        "SELECT estimator, count(*) AS n FROM runs GROUP BY 1 ORDER BY 1",
        "--store",
        path,
        "--format",
        "json",
      ]);
      assert.equal(json.code, 0, json.stderr);
      assert.deepEqual(JSON.parse(json.stdout), [{ estimator: "dr-mas", n: 3 }, {
        estimator: "grpo",
        n: 3,
      }]);
      const csv = await task("sql", [
        "SELECT run_id, seed FROM runs WHERE seed = 1 ORDER BY 1",
        "--store",
        path,
        "--format",
        "csv",
      ]);
      assert.equal(csv.stdout, "run_id,seed\ndr-mas-1,1\ngrpo-1,1\n");
      for (
        const write of [
          "DELETE FROM runs",
          "  /* sneaky */ INSERT INTO turn_events SELECT * FROM turn_events",
          "DROP VIEW runs",
          "COPY runs TO 'x.csv'",
        ]
      ) {
        const refused = await task("sql", [write, "--store", path]);
        assert.equal(refused.code, 2, write);
        assert.match(
          refused.stderr,
          /refused: (DELETE|INSERT|DROP|COPY) statements are not allowed/,
        );
      }
      const bad = await task("sql", ["SELEC 1", "--store", path]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /malformed SQL: Parser Error: syntax error at or near "SELEC"/);
      const out = `${dir}/turns.parquet`;
      const pq = await task("sql", [
        "SELECT * FROM turns",
        "--store",
        path,
        "--format",
        "parquet",
        "--out",
        out,
      ]);
      assert.equal(pq.code, 0, pq.stderr);
      const instance = await DuckDBInstance.create(":memory:");
      const conn = await instance.connect();
      const [{ n }] = (await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet('${out}')`))
        .getRowObjectsJS();
      conn.closeSync();
      instance.closeSync();
      const direct = await task("sql", [
        "SELECT count(*) AS n FROM turns",
        "--store",
        path,
        "--format",
        "json",
      ]);
      assert.equal(Number(n), JSON.parse(direct.stdout)[0].n);
      const repl = await task("sql", ["--store", path], "SELECT 41 + 1\n AS answer;\n.quit\n");
      assert.equal(repl.code, 0, repl.stderr);
      assert.match(repl.stdout, /\|\s+42 \|/);
      const missing = await task("sql", ["SELECT 1", "--store", `${dir}/absent.sqlite`]);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /absent\.sqlite/);
    });
    await t.step("export: every documented table as Parquet for one run", async () => {
      const out = `${dir}/export`;
      const r = await task("export", ["latest", "--store", path, "--out", out]);
      assert.equal(r.code, 0, r.stderr);
      for (const t of EXPORTED) assert.ok((await Deno.stat(`${out}/${t}.parquet`)).size > 0, t);
      const instance = await DuckDBInstance.create(":memory:");
      const conn = await instance.connect();
      const rows = (await conn.runAndReadAll(
        `SELECT DISTINCT run_id, count(*) OVER () AS n FROM read_parquet('${out}/turns.parquet')`,
      )).getRowObjectsJS();
      conn.closeSync();
      instance.closeSync();
      assert.equal(rows.length, 1);
      assert.equal(rows[0].run_id, "dr-mas-3");
      assert.equal(
        Number(rows[0].n),
        events.get("dr-mas-3")!.filter((e) => e.type === "turn.generated").length,
      );
      const unknown = await task("export", ["nope", "--store", path]);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /no run nope; known runs \(newest first\): dr-mas-3/);
    });
    await t.step("report: means, SEM and Welch match values computed from the events", async () => {
      const r = await task("report", [
        "--store",
        path,
        "--group-by",
        "estimator",
        "--baseline",
        "estimator=grpo",
        "--format",
        "json",
      ]);
      assert.equal(r.code, 0, r.stderr);
      const report = JSON.parse(r.stdout);
      // Independently: each run's avg@k per benchmark from its evaluation events.
      const perRun = (estimator: string, benchmark: string) =>
        [1, 2, 3].map((seed) => {
          const e = events.get(`${estimator}-${seed}`)!.find((x) =>
            x.type === "evaluation.completed" && x.data.benchmark === benchmark
          )!;
          if (e.type !== "evaluation.completed") throw new Error("unreachable");
          return e.data.problems.reduce((s, p) => s + p.c / p.n, 0) / e.data.problems.length;
        });
      const meanOf = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
      const varOf = (xs: number[]) =>
        xs.reduce((s, x) => s + (x - meanOf(xs)) ** 2, 0) / (xs.length - 1);
      for (const benchmark of ["gsm8k", "math"]) {
        const a = perRun("dr-mas", benchmark);
        const b = perRun("grpo", benchmark);
        // A column is one benchmark at one k (the fixture's 4 samples per problem).
        const cell = report.accuracy.find((c: { group: string; benchmark: string }) =>
          c.group === "dr-mas" && c.benchmark === `${benchmark} avg@4`
        );
        assert.ok(Math.abs(cell.mean - meanOf(a)) < 1e-12);
        assert.ok(Math.abs(cell.sem - Math.sqrt(varOf(a) / 3)) < 1e-12);
        const vs = report.vsBaseline.find((c: { benchmark: string }) =>
          c.benchmark === `${benchmark} avg@4`
        );
        const va = varOf(a) / 3;
        const vb = varOf(b) / 3;
        assert.ok(Math.abs(vs.diff - (meanOf(a) - meanOf(b))) < 1e-12);
        assert.ok(Math.abs(vs.welch.t - (meanOf(a) - meanOf(b)) / Math.sqrt(va + vb)) < 1e-9);
        assert.ok(Math.abs(vs.welch.df - (va + vb) ** 2 / (va ** 2 / 2 + vb ** 2 / 2)) < 1e-9);
        assert.ok(vs.welch.p > 0 && vs.welch.p < 1);
      }
      assert.equal(report.pairwise.length, 2);
      assert.deepEqual(
        report.stability.map((s: { group: string; wg: string }) => `${s.group}/${s.wg}`),
        ["dr-mas/wg0", "dr-mas/wg1", "grpo/wg0", "grpo/wg1"],
      );
      const md = await task("report", [
        "grpo-1",
        "grpo-2",
        "dr-mas-1",
        "dr-mas-2",
        "--store",
        path,
      ]);
      assert.equal(md.code, 0, md.stderr);
      assert.match(md.stdout, /^# Report: runs grouped by `estimator`/);
      assert.match(md.stdout, /## Against the baseline \(dr-mas\)/);
      // pass@k with k = n samples is 1 for a problem with any correct sample, else 0.
      const pass = await task("report", [
        "--store",
        path,
        "--metric",
        "pass@k",
        "--format",
        "json",
      ]);
      assert.equal(pass.code, 0, pass.stderr);
      const passReport = JSON.parse(pass.stdout);
      assert.equal(passReport.metric, "pass@k");
      const solved = [1, 2, 3].map((seed) => {
        const e = events.get(`grpo-${seed}`)!.find((x) =>
          x.type === "evaluation.completed" && x.data.benchmark === "math"
        )!;
        if (e.type !== "evaluation.completed") throw new Error("unreachable");
        return e.data.problems.filter((p) => p.c > 0).length / e.data.problems.length;
      });
      const passCell = passReport.accuracy.find((c: { group: string; benchmark: string }) =>
        c.group === "grpo" && c.benchmark === "math pass@4"
      );
      assert.deepEqual(passCell.samples, solved);
      const bad = await task("report", ["--store", path, "--baseline", "ppo"]);
      assert.equal(bad.code, 2);
      assert.match(
        bad.stderr,
        /--baseline: no selected run has estimator=ppo; the selected groups are dr-mas, grpo/,
      );
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("stats task: Welch from (mean, SEM, n) as a paper prints it", async () => {
  // MADA-RL style check: 41.9 ± 0.3 vs 39.9 ± 0.4 over 10 seeds each. se = 0.5, t = 4, and
  // df = (0.09 + 0.16)^2 / ((0.09^2 + 0.16^2) / 9) = 16.691394658753708 by hand.
  const r = await task("stats", ["welch", "--a", "41.9,0.3,10", "--b", "39.9,0.4,10", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.ok(Math.abs(out.diff - 2) < 1e-12);
  assert.ok(Math.abs(out.se - 0.5) < 1e-12);
  assert.ok(Math.abs(out.t - 4) < 1e-12);
  assert.ok(Math.abs(out.df - 0.0625 / ((0.0081 + 0.0256) / 9)) < 1e-9);
  assert.ok(out.p > 0 && out.p < 0.001);
  // --json is the alias of --format json; the table rounds, csv keeps full precision.
  const viaFormat = await task("stats", [
    "welch",
    "--a",
    "41.9,0.3,10",
    "--b",
    "39.9,0.4,10",
    "--format",
    "json",
  ]);
  assert.deepEqual(JSON.parse(viaFormat.stdout), out);
  const args = ["welch", "--a", "41.9,0.3,10", "--b", "39.9,0.4,10", "--format"];
  const table = await task("stats", [...args, "table"]);
  assert.match(table.stdout, /^df {4}16\.69$/m);
  assert.match(table.stdout, /^p {5}0\.0009575$/m);
  const csv = (await task("stats", [...args, "csv"])).stdout.trim().split("\n");
  assert.equal(csv[0], "diff,se,df,t,p,ci95_low,ci95_high");
  assert.equal(Number(csv[1].split(",")[2]), out.df);
  assert.equal((await task("stats", [...args, "xml"])).code, 2);
  const bad = await task("stats", ["welch", "--a", "41.9,0.3", "--b", "39.9,0.4,10"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--a must be three numbers MEAN,SEM,N/);
});
