/**
 * The study's power analysis: each claim's minimum detectable difference, power at the paper's
 * effect and seeds needed (against the statistics module, and by the definition of "needed"),
 * the validation-size model, the committed v1 report re-rendered from its study.json with the
 * power column, and `deno task study power` through the real CLI (formats, exit codes, a missing,
 * corrupt or foreign results file).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { welchMde, welchPower } from "../../analysis/mod.ts";
import { claimPower, type PowerSide } from "../../study/claim-power.ts";
import { loadGrid } from "../../study/load-grid.ts";
import { planPower } from "../../study/plan-power.ts";
import { readStudyResults, withPower } from "../../study/read-study-results.ts";
import { renderStudy } from "../../study/render-study.ts";
import { studyCharts } from "../../study/study-charts.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DENO_JSON = join(ROOT, "deno.json");
const STUDY_CLI = join(ROOT, "study/cli/study.ts");
const V1_JSON = join(ROOT, "docs/study/v1/study.json");
const V1_README = join(ROOT, "docs/study/v1/README.md");

/**
 * The v1 page as the study wrote it in docs/study: the committed copy in docs/study/v1 less its
 * moved-here line, with its config links restored.
 */
async function v1AsGenerated(): Promise<string> {
  const lines = (await Deno.readTextFile(V1_README)).split("\n");
  assert.match(lines[2], /^> The first study \(v1\), moved here/);
  return [...lines.slice(0, 1), ...lines.slice(3)].join("\n")
    .replaceAll(/`(study\/[^`]+)` \(at d25f59d\)/g, "[$1](../../$1)");
}
const GRID = join(ROOT, "study/grid.json");

function sd(xs: readonly number[]): number {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1));
}

const size = { problems: 16, samples: 16 };
const side = (cell: string, values: number[], planned = size): PowerSide => ({
  cell,
  values,
  observed: size,
  planned,
});
const A = [0.22, 0.27, 0.25, 0.28, 0.30];
const B = [0.25, 0.27, 0.30, 0.24, 0.28];

Deno.test("claim power: MDE, power at the paper's effect and seeds needed, by definition", () => {
  const p = claimPower({
    metric: "avg@k",
    expect: "higher",
    paperEffect: { relative: 0.1 },
    cell: side("a", A),
    reference: side("b", B),
    seeds: 5,
    alpha: 0.05,
    power: 0.8,
  });
  const design = { sd1: sd(A), n1: 5, sd2: sd(B), n2: 5 };
  assert.equal(p.mde, welchMde(design, 0.05, 0.8));
  assert.equal(p.mdeLow, p.mde); // nothing resized
  const effect = 0.1 * (B.reduce((s, x) => s + x, 0) / 5);
  assert.ok(Math.abs(p.paperEffect! - effect) < 1e-15);
  assert.equal(p.powerAtPaper, welchPower(effect, design, 0.05));
  const n = p.seedsNeeded!;
  const at = (k: number) => welchPower(effect, { ...design, n1: k, n2: k }, 0.05);
  assert.ok(at(n) >= 0.8 && at(n - 1) < 0.8, `seeds needed ${n}`);
  // At the MDE the test has exactly the asked power.
  assert.ok(Math.abs(welchPower(p.mde!, design, 0.05) - 0.8) < 1e-9);
});

Deno.test("claim power: a larger validation set shrinks the problem noise, never training's", () => {
  const base = {
    metric: "avg@k" as const,
    expect: "higher" as const,
    paperEffect: null,
    seeds: 5,
    alpha: 0.05,
    power: 0.8,
  };
  const same = claimPower({ ...base, cell: side("a", A), reference: side("b", B) });
  const big = { problems: 256, samples: 16 };
  const more = claimPower({
    ...base,
    cell: side("a", A, big),
    reference: side("b", B, big),
  });
  assert.ok(more.mde! < same.mde! && more.mdeLow! <= more.mde!);
  for (const s of more.spread) {
    assert.ok(s.sd < s.observedSd && s.sdLow <= s.sd);
    // Conservative end: only the least problem noise m(1-m)/(kP) is rescaled.
    const m = (s.cell === "a" ? A : B).reduce((x, y) => x + y, 0) / 5;
    const least = (m * (1 - m)) / (16 * 16);
    const s2 = s.observedSd ** 2;
    const held = s2 - Math.min(least, s2);
    const scale = Math.min(least, s2) / least;
    assert.ok(Math.abs(s.sd - Math.sqrt(held + scale * (m * (1 - m)) / (16 * 256))) < 1e-15);
  }
  // Gradient-norm metrics do not depend on the evaluation: the spread is kept.
  const grad = claimPower({
    ...base,
    metric: "grad-norm-max-over-median",
    expect: "lower",
    cell: side("a", [1, 2, 3], big),
    reference: side("b", [2, 3, 5], big),
  });
  assert.equal(grad.spread[0].sd, grad.spread[0].observedSd);
  // pass@k at another k is another quantity; unknown problem counts cannot be rescaled.
  const k32 = claimPower({
    ...base,
    metric: "pass@k",
    cell: side("a", A, { problems: 64, samples: 32 }),
    reference: side("b", B, { problems: 64, samples: 32 }),
  });
  assert.equal(k32.mde, null);
  assert.match(k32.note!, /keep k/);
  const unknown = claimPower({
    ...base,
    cell: { ...side("a", A, big), observed: { problems: null, samples: 16 } },
    reference: side("b", B, big),
  });
  assert.match(unknown.note!, /not known/);
});

Deno.test("claim power: what cannot be computed says why", () => {
  const base = {
    metric: "avg@k" as const,
    expect: "higher" as const,
    paperEffect: { difference: 0.05 },
    alpha: 0.05,
    power: 0.8,
  };
  const one = claimPower({ ...base, seeds: 5, cell: side("a", [0.3]), reference: side("b", B) });
  assert.equal(one.mde, null);
  assert.match(one.note!, /has 1 run\(s\) to take a spread from/);
  const flat = claimPower({
    ...base,
    seeds: 5,
    cell: side("a", [0, 0, 0]),
    reference: side("b", [0, 0, 0]),
  });
  assert.match(flat.note!, /no spread/);
  const unreachable = claimPower({
    ...base,
    paperEffect: { difference: 1e-7 },
    seeds: 5,
    cell: side("a", A),
    reference: side("b", B),
  });
  assert.equal(unreachable.seedsNeeded, null);
  assert.match(unreachable.note!, /more than 10000 seeds/);
  const ceiling = claimPower({
    ...base,
    paperEffect: { relative: 0.046 },
    seeds: 5,
    cell: side("a", [0.95, 1, 1, 0.95, 1]),
    reference: side("b", [1, 0.95, 1, 1, 0.95]),
  });
  assert.match(ceiling.note!, /past the bounds of a rate/);
});

Deno.test("v1 report: re-rendered from the committed study.json, it is the committed page plus power", async () => {
  const grid = await loadGrid(GRID);
  const v1 = withPower(await readStudyResults(V1_JSON), grid);
  const page = renderStudy(v1, studyCharts(v1), join(ROOT, "docs/study"));
  const committed = await v1AsGenerated();
  // Remove what power added: the Power section and the claims tables' last column.
  const lines = page.split("\n");
  const start = lines.indexOf("## Power");
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  assert.ok(start > 0 && end > start);
  const withoutPower: string[] = [];
  let claimsTable = false;
  for (const line of [...lines.slice(0, start), ...lines.slice(end)]) {
    if (line.startsWith("| claim | paper | this study | verdict | power (5 seeds) |")) {
      claimsTable = true;
    } else if (line === "") claimsTable = false;
    withoutPower.push(claimsTable ? line.replace(/\|[^|]*\|$/, "|") : line);
  }
  assert.equal(withoutPower.join("\n"), committed);
  // The power section: one row per claim, the v1 numbers.
  const section = lines.slice(start, end).join("\n");
  assert.match(
    section,
    /avg@16 of refine-drmas higher than refine-grpo \| refine-drmas 2\.84, refine-grpo 3\.03 \| 5\.95 \| \+1\.47 \| 11% \| 64 \|/,
  );
  assert.match(section, /5 seeds per cell/);
});

async function studyPower(args: string[], cwd = ROOT) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "-A", `--config=${DENO_JSON}`, STUDY_CLI, "power", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("study power CLI: table, json and csv of the grid's claims from study.json", async () => {
  const help = await studyPower(["--help"]);
  assert.equal(help.code, 0);
  for (const flag of ["--grid", "--from", "--seeds", "--validation", "--samples", "--format"]) {
    assert.ok(help.stdout.includes(flag), `--help names ${flag}`);
  }
  const json = await studyPower(["--format", "json", "--seeds", "10", "--validation", "64"]);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout);
  assert.equal(doc.kind, "study-power");
  assert.equal(doc.seeds, 10);
  // The JSON's numbers are the planner's, at the planned seeds and validation size, from the
  // grid's previous study (v1) by default.
  const grid = await loadGrid(GRID);
  const rows = planPower(grid, await readStudyResults(V1_JSON), { seeds: 10, problems: 64 });
  assert.equal(doc.from, "docs/study/v1/study.json");
  assert.equal(doc.claims.length, rows.length);
  assert.deepEqual(doc.claims, JSON.parse(JSON.stringify(rows)));
  const avg = doc.claims[0];
  assert.equal(avg.metric, "avg@k");
  assert.equal(avg.power.seeds, 10);
  assert.ok(
    avg.power.spread[0].planned.problems === 64 && avg.power.spread[0].observed.problems === 16,
  );
  assert.ok(avg.power.mde < 0.0595 / 1.5, "10 seeds and 64 problems detect far less than v1");
  const csv = await studyPower(["--format", "csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  const lines = csv.stdout.trim().split("\n");
  assert.ok(lines[0].startsWith("comparison,cell,against,agent,metric,expect,seeds,alpha,power,"));
  assert.equal(lines.length, rows.length + 1);
  // The committed grid's own sizes: 4 seeds, refine on 256 problems x 4 samples (v1: 16 x 16),
  // the row docs/STUDY-POWER.md states for v2 as run.
  assert.equal(grid.seeds, 4);
  const table = await studyPower([]);
  assert.equal(table.code, 0, table.stderr);
  assert.match(
    table.stdout,
    /avg@k refine-drmas higher vs refine-grpo .*\| 4 .*\| 1\.75–4\.10 .*\| \+1\.47 .*\| 17\.7% .*\| 23 /,
  );
});

Deno.test("study power CLI: bad usage exits 2, a missing, corrupt or foreign study.json is named", async () => {
  for (
    const [args, pattern] of [
      [["--format", "xml"], /--format must be one of/],
      [["--seeds", "1"], /--seeds must be an integer >= 2/],
      [["--validation", "ten"], /--validation must be an integer >= 1/],
      [["--from", "/nonexistent/study.json"], /cannot read the study results/],
      [["--grid", "/nonexistent/grid.json"], /readable grid file/],
      [["stray"], /./],
    ] as const
  ) {
    const r = await studyPower([...args]);
    assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern);
  }
  const dir = await Deno.makeTempDir({ prefix: "polyrl-power-" });
  try {
    const corrupt = join(dir, "corrupt.json");
    await Deno.writeTextFile(corrupt, '{"kind": "study-results", "cells": [');
    const r1 = await studyPower(["--from", corrupt]);
    assert.equal(r1.code, 1);
    assert.match(r1.stderr, /corrupt\.json is not JSON .*regenerate it/);
    const foreign = join(dir, "foreign.json");
    await Deno.writeTextFile(foreign, JSON.stringify({ kind: "report", cells: [] }));
    const r2 = await studyPower(["--from", foreign]);
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /foreign\.json is not a study's results: at kind/);
    const v1 = JSON.parse(await Deno.readTextFile(V1_JSON));
    v1.cells[0].accuracy.avg.samples = "0.3";
    const wrong = join(dir, "wrong.json");
    await Deno.writeTextFile(wrong, JSON.stringify(v1));
    const r3 = await studyPower(["--from", wrong]);
    assert.equal(r3.code, 1);
    assert.match(r3.stderr, /at cells\.0\.accuracy\.avg\.samples/);
    // A results file without some of the grid's cells: those claims say so, the rest are planned.
    const partial = JSON.parse(await Deno.readTextFile(V1_JSON));
    partial.cells = partial.cells.filter((c: { id: string }) => c.id !== "debate-mada-r3");
    const part = join(dir, "partial.json");
    await Deno.writeTextFile(part, JSON.stringify(partial));
    const r4 = await studyPower(["--from", part, "--format", "json"]);
    assert.equal(r4.code, 0, r4.stderr);
    const r3row = JSON.parse(r4.stdout).claims.find((c: { cell: string }) =>
      c.cell === "debate-mada-r3"
    );
    assert.match(r3row.power.note, /no earlier runs of debate-mada-r3/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("study --report-only --from: the committed v1 report rebuilt from its study.json, with power", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-v1-report-" });
  const run = async (args: string[]) => {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-q", "-A", `--config=${DENO_JSON}`, STUDY_CLI, ...args],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  };
  try {
    const r = await run(["--report-only", "--from", V1_JSON, "--out", dir]);
    assert.equal(r.code, 0, r.stderr);
    const page = await Deno.readTextFile(join(dir, "README.md"));
    assert.match(page, /\n## Power\n/);
    assert.match(page, /\| claim \| paper \| this study \| verdict \| power \(5 seeds\) \|/);
    const rebuilt = JSON.parse(await Deno.readTextFile(join(dir, "study.json")));
    const claims = rebuilt.comparisons.flatMap((c: { claims: unknown[] }) => c.claims);
    assert.equal(claims.length, 17);
    assert.equal(claims[0].power.seedsNeeded, 64);
    assert.equal(rebuilt.power, 0.8);
    const svgs = async (folder: string) => {
      const names: string[] = [];
      for await (const e of Deno.readDir(folder)) if (e.name.endsWith(".svg")) names.push(e.name);
      return names.sort();
    };
    assert.deepEqual(await svgs(dir), await svgs(join(ROOT, "docs/study/v1")));
    // The grid's previous study is v1 itself here: every verdict unchanged.
    assert.match(page, /## Changes from v1\n\nEvery claim of v1 .*: 0 of 17 verdicts changed/);
    const without = await run(["--from", V1_JSON, "--out", dir]);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /add --report-only/);
    const absent = await run(["--report-only", "--from", join(dir, "none.json"), "--out", dir]);
    assert.equal(absent.code, 2);
    assert.match(absent.stderr, /cannot read the study results .*none\.json/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
