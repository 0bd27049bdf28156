/**
 * The study's power analysis: each claim's minimum detectable difference, power at the paper's
 * effect and seeds needed (against the statistics module, and by the definition of "needed"),
 * the validation-size model, the committed v1 report re-rendered from its study.json with the
 * power column and the paired test (v1's verdicts as published once the paired columns are taken
 * out, and the one verdict pairing moves), v2's report rebuilt through the CLI with its paired
 * column, and `deno task study power` through the real CLI (Welch's and the paired test's
 * figures; formats, exit codes, a missing, corrupt or foreign results file).
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { welchMde, welchPower } from "../../analysis/mod.ts";
import { claimPower } from "../../study/claim-power.ts";
import { loadGrid } from "../../study/load-grid.ts";
import { planPower } from "../../study/plan-power.ts";
import {
  previousResultsFile,
  readStudyResults,
  withPower,
  withPreviousStudy,
} from "../../study/read-study-results.ts";
import { renderStudy } from "../../study/render-study.ts";
import { powerPlanRow } from "../../study/power-plan-table.ts";
import { studyCharts } from "../../study/study-charts.ts";
import { verdictOf } from "../../study/claims.ts";
import type { ClaimResult, StudyResults } from "../../study/study-results.ts";
import { powerSide } from "./power-side.ts";
import { runCli } from "../support/run-cli.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const V1_JSON = join(ROOT, "docs/study/v1/study.json");
const V1_README = join(ROOT, "docs/study/v1/README.md");
const V2_JSON = join(ROOT, "docs/study/v2/study.json");
const V3_JSON = join(ROOT, "docs/study/study.json");

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

const A = [0.22, 0.27, 0.25, 0.28, 0.30];
const B = [0.25, 0.27, 0.30, 0.24, 0.28];

Deno.test("claim power: MDE, power at the paper's effect and seeds needed, by definition", () => {
  const p = claimPower({
    metric: "avg@k",
    expect: "higher",
    paperEffect: { relative: 0.1 },
    cell: powerSide("a", A),
    reference: powerSide("b", B),
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
  const same = claimPower({ ...base, cell: powerSide("a", A), reference: powerSide("b", B) });
  const big = { problems: 256, samples: 16 };
  const more = claimPower({
    ...base,
    cell: powerSide("a", A, big),
    reference: powerSide("b", B, big),
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
    cell: powerSide("a", [1, 2, 3], big),
    reference: powerSide("b", [2, 3, 5], big),
  });
  assert.equal(grad.spread[0].sd, grad.spread[0].observedSd);
  // pass@k at another k is another quantity; unknown problem counts cannot be rescaled.
  const k32 = claimPower({
    ...base,
    metric: "pass@k",
    cell: powerSide("a", A, { problems: 64, samples: 32 }),
    reference: powerSide("b", B, { problems: 64, samples: 32 }),
  });
  assert.equal(k32.mde, null);
  assert.match(k32.note!, /keep k/);
  const unknown = claimPower({
    ...base,
    cell: { ...powerSide("a", A, big), observed: { problems: null, samples: 16 } },
    reference: powerSide("b", B, big),
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
  const one = claimPower({
    ...base,
    seeds: 5,
    cell: powerSide("a", [0.3]),
    reference: powerSide("b", B),
  });
  assert.equal(one.mde, null);
  assert.match(one.note!, /has 1 run\(s\) to take a spread from/);
  const flat = claimPower({
    ...base,
    seeds: 5,
    cell: powerSide("a", [0, 0, 0]),
    reference: powerSide("b", [0, 0, 0]),
  });
  assert.match(flat.note!, /no spread/);
  const unreachable = claimPower({
    ...base,
    paperEffect: { difference: 1e-7 },
    seeds: 5,
    cell: powerSide("a", A),
    reference: powerSide("b", B),
  });
  assert.equal(unreachable.seedsNeeded, null);
  assert.match(unreachable.note!, /more than 10000 seeds/);
  const ceiling = claimPower({
    ...base,
    paperEffect: { relative: 0.046 },
    seeds: 5,
    cell: powerSide("a", [0.95, 1, 1, 0.95, 1]),
    reference: powerSide("b", [1, 0.95, 1, 1, 0.95]),
  });
  assert.match(ceiling.note!, /past the bounds of a rate/);
});

Deno.test("v1 report: re-rendered from the committed study.json, it is the committed page plus power and the paired test", async () => {
  const grid = await loadGrid(GRID);
  const v1 = withPower(await readStudyResults(V1_JSON), grid);
  const claimsOf = (r: StudyResults) => r.comparisons.flatMap((c) => c.claims);
  // v1 as it decided: every verdict Welch's (the one-sample test's), nothing paired.
  const welchOnly: StudyResults = {
    ...v1,
    comparisons: v1.comparisons.map((c) => ({
      ...c,
      claims: c.claims.map((x) => ({
        ...x,
        verdict: verdictOf(x.expect, x.test, v1.alpha),
        decidedBy: x.against === null ? "one-sample" as const : "welch" as const,
      })),
    })),
  };
  const page = renderStudy(welchOnly, studyCharts(v1), join(ROOT, "docs/study"));
  const committed = await v1AsGenerated();
  // Remove what power and pairing added: the Power section, the claims tables' paired, verdict
  // from and power columns (Welch's difference back in "this study"), the methods' sentences on
  // the paired test.
  const lines = page.split("\n");
  const start = lines.indexOf("## Power");
  const end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  assert.ok(start > 0 && end > start);
  const before: string[] = [];
  let claimsTable = false;
  for (const line of [...lines.slice(0, start), ...lines.slice(end)]) {
    if (line.startsWith("| claim | paper | this study | difference, Welch |")) {
      claimsTable = true;
      before.push("| claim | paper | this study | verdict |");
      continue;
    }
    if (line === "") claimsTable = false;
    if (!claimsTable) {
      before.push(line);
      continue;
    }
    const cells = line.slice(2, -2).split(" | ");
    assert.equal(cells.length, 8, line);
    if (cells[0] === "---") {
      before.push("| --- | ---: | ---: | ---: |");
      continue;
    }
    const [claim, paper, values, welch, , verdict] = cells;
    const study = `${values}; difference ${welch.replace(/^one-sample: /, "")}`;
    before.push(`| ${[claim, paper, study, verdict].join(" | ")} |`);
  }
  const methods =
    /Differences between cells are tested over per-run values two ways.*?with a one-sample t-test\. /;
  assert.match(before.join("\n"), methods);
  const asV1 = before.join("\n").replace(
    methods,
    "Differences between cells are Welch's two-sided t-tests over per-run values, with the 95% " +
      "CI of the difference; the Lemma 4.2 multiplier is tested against 1 with a one-sample " +
      "t-test. ",
  );
  assert.equal(asV1, committed);
  // The power section: one row per claim, the v1 numbers, Welch's then the paired test's.
  const section = lines.slice(start, end).join("\n");
  assert.match(
    section,
    /avg@16 of refine-drmas higher than refine-grpo \| refine-drmas 2\.84, refine-grpo 3\.03 \| 5\.95 \| \+1\.47 \| 11% \| 64 \| 0\.51 \(r = 0\.99\) \| 0\.86 \| 99\.6% \| 4 \|/,
  );
  assert.match(section, /5 seeds per cell/);
  // v1's seeds pair (each seed's validation problems were drawn from it, the same in every
  // cell): the paired test decides 15 of its 17 verdicts and moves one. MADA-RL's 1-round debate,
  // +9.38 points above 2 rounds, was inconclusive by Welch's p = 0.117 and disagrees paired.
  const paired = claimsOf(v1);
  assert.equal(paired.filter((c) => c.decidedBy === "paired").length, 13);
  const moved = paired.filter((c, i) => c.verdict !== claimsOf(welchOnly)[i].verdict);
  assert.deepEqual(
    moved.map((c) => [c.cell, c.against, c.metric, c.verdict, c.paired!.p.toFixed(3)]),
    [["debate-mada-r1", "debate-mada", "avg@k", "disagrees", "0.039"]],
  );
});

const studyPower = (args: string[]) => runCli("study/cli/study.ts", "power", ...args);

Deno.test("study power CLI: table, json and csv of the grid's claims from study.json, Welch's and paired", async () => {
  const help = await studyPower(["--help"]);
  assert.equal(help.code, 0);
  for (const flag of ["--grid", "--from", "--seeds", "--validation", "--samples", "--format"]) {
    assert.ok(help.stdout.includes(flag), `--help names ${flag}`);
  }
  assert.match(help.stdout, /paired t-test/);
  const json = await studyPower(["--format", "json", "--seeds", "10", "--validation", "64"]);
  assert.equal(json.code, 0, json.stderr);
  const doc = JSON.parse(json.stdout);
  assert.equal(doc.kind, "study-power");
  assert.equal(doc.seeds, 10);
  // The JSON's numbers are the planner's, at the planned seeds and validation size, from the
  // grid's previous study by default.
  const grid = await loadGrid(GRID);
  const from = relative(ROOT, previousResultsFile(grid)!);
  const earlier = await readStudyResults(join(ROOT, from));
  const rows = planPower(grid, earlier, { seeds: 10, problems: 64 });
  assert.equal(doc.from, from);
  assert.equal(doc.claims.length, rows.length);
  assert.deepEqual(doc.claims, JSON.parse(JSON.stringify(rows)));
  const avg = doc.claims[0];
  assert.equal(avg.metric, "avg@k");
  assert.equal(avg.power.seeds, 10);
  const observed = earlier.cells.find((c) => c.id === avg.cell)!.problems;
  assert.ok(
    avg.power.spread[0].planned.problems === 64 &&
      avg.power.spread[0].observed.problems === observed,
  );
  // The earlier runs of both cells pair by seed: the paired test's power beside Welch's.
  const paired = avg.power.paired;
  assert.ok(paired.pairs >= 2 && paired.correlation > 0.5, JSON.stringify(paired));
  assert.ok(paired.mde < avg.power.mde, "correlated seeds: the paired test detects less");
  assert.ok(paired.seedsNeeded <= avg.power.seedsNeeded);
  const csv = await studyPower(["--format", "csv"]);
  assert.equal(csv.code, 0, csv.stderr);
  const lines = csv.stdout.trim().split("\n");
  assert.ok(lines[0].startsWith("comparison,cell,against,agent,metric,expect,seeds,alpha,power,"));
  assert.ok(
    lines[0].endsWith(
      ",note,paired,correlation,sd_difference,paired_mde,paired_mde_low," +
        "paired_power_at_paper,paired_seeds_needed,paired_note",
    ),
  );
  assert.equal(lines.length, rows.length + 1);
  // The table at the grid's own seeds and sizes: the first claim's Welch and paired figures.
  const table = await studyPower([]);
  assert.equal(table.code, 0, table.stderr);
  const [row] = planPower(grid, earlier);
  const p = row.power;
  const q = p.paired!;
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const line = table.stdout.split("\n").find((l) =>
    l.includes("avg@k refine-drmas higher vs refine-grpo")
  )!;
  const cells = line.split("|").map((c) => c.trim());
  assert.equal(cells[3], String(grid.seeds));
  assert.equal(cells[7], pct(p.powerAtPaper!));
  assert.equal(cells[8], String(p.seedsNeeded));
  assert.match(cells[9], new RegExp(`\\(r ${q.correlation!.toFixed(2)}\\)$`));
  assert.equal(cells[11], pct(q.powerAtPaper!));
  assert.equal(cells[12], String(q.seedsNeeded));
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
    // A cell of the grid's last claim, left out of the results file.
    const grid = await loadGrid(GRID);
    const gone = grid.comparisons.at(-1)!.claims.at(-1)!.cell;
    const partial = JSON.parse(await Deno.readTextFile(V2_JSON));
    partial.cells = partial.cells.filter((c: { id: string }) => c.id !== gone);
    const part = join(dir, "partial.json");
    await Deno.writeTextFile(part, JSON.stringify(partial));
    const r4 = await studyPower(["--from", part, "--format", "json"]);
    assert.equal(r4.code, 0, r4.stderr);
    const row = JSON.parse(r4.stdout).claims.find((c: { cell: string }) => c.cell === gone);
    assert.match(row.power.note, new RegExp(`no earlier runs of ${gone}`));
    assert.equal(row.power.paired, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("study --report-only --from: v2's report rebuilt from its study.json, paired and with power", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-v2-report-" });
  const run = (args: string[]) => runCli("study/cli/study.ts", ...args);
  try {
    const r = await run(["--report-only", "--from", V2_JSON, "--out", dir]);
    assert.equal(r.code, 0, r.stderr);
    const page = await Deno.readTextFile(join(dir, "README.md"));
    assert.match(page, /\n## Power\n/);
    assert.match(
      page,
      /\| claim \| paper \| this study \| difference, Welch \| difference, paired by seed \| verdict \| verdict from \| power \(4 seeds\) \|/,
    );
    // The paired column from v2's per-seed values (its study.json has no paired fields).
    assert.match(
      page,
      /\| -1\.39 \[-2\.43, -0\.36\], p = 0\.023, r = 0\.81 \| \*\*disagrees\*\* \| paired t \|/,
    );
    assert.match(
      page,
      /\| -1\.90 \[-3\.16, -0\.65\], p = 0\.017, r = 0\.92 \| \*\*disagrees\*\* \| paired t \|/,
    );
    const grid = await loadGrid(GRID);
    const expected = withPower(await readStudyResults(V2_JSON), grid);
    const rebuilt = JSON.parse(await Deno.readTextFile(join(dir, "study.json")));
    const claims = rebuilt.comparisons.flatMap((c: { claims: ClaimResult[] }) => c.claims);
    const want = expected.comparisons.flatMap((c) => c.claims);
    assert.equal(claims.length, want.length);
    assert.deepEqual(claims.map((c: ClaimResult) => c.decidedBy), want.map((c) => c.decidedBy));
    assert.equal(claims[0].power.seedsNeeded, want[0].power.seedsNeeded);
    assert.equal(claims[0].power.paired.seedsNeeded, want[0].power.paired!.seedsNeeded);
    assert.equal(rebuilt.power, 0.8);
    const svgs = async (folder: string) => {
      const names: string[] = [];
      for await (const e of Deno.readDir(folder)) if (e.name.endsWith(".svg")) names.push(e.name);
      return names.sort();
    };
    assert.deepEqual(await svgs(dir), await svgs(join(ROOT, "docs/study/v2")));
    // Rebuilding the grid's previous study keeps the comparison it holds (v2's with v1).
    const previousTitle = previousResultsFile(grid) === V2_JSON ? "v1" : grid.previous!.title;
    assert.match(page, new RegExp(`\n## Changes from ${previousTitle}\n`));
    const without = await run(["--from", V2_JSON, "--out", dir]);
    assert.equal(without.code, 2);
    assert.match(without.stderr, /add --report-only/);
    const absent = await run(["--report-only", "--from", join(dir, "none.json"), "--out", dir]);
    assert.equal(absent.code, 2);
    assert.match(absent.stderr, /cannot read the study results .*none\.json/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the report states the power planned from the earlier study before its results", async () => {
  const grid = await loadGrid(GRID);
  const earlier = await readStudyResults(previousResultsFile(grid)!);
  const results = await withPreviousStudy(await readStudyResults(V3_JSON), grid);
  const planned = planPower(grid, earlier);
  assert.deepEqual(results.previous?.plannedPower, planned);
  const page = renderStudy(results, studyCharts(results), join(ROOT, "docs/study"));
  const at = (heading: string) => page.indexOf(`\n## ${heading}\n`);
  assert.ok(at("Setup") < at("Power planned before the grid"));
  assert.ok(at("Power planned before the grid") < at("Results against the papers"));
  // Every claim's row as `deno task study power` prints it, v2's file linked from docs/study.
  const section = page.slice(at("Power planned before the grid"), at("Results against the papers"));
  for (const row of planned) assert.ok(section.includes(`| ${powerPlanRow(row).join(" | ")} |`));
  assert.match(section, /\[v2's study\.json\]\(v2\/study\.json\)/);
  // The first claim, refine Dr. MAS vs GRPO avg@4: the paired test needs far fewer seeds.
  const first = planned[0].power;
  assert.ok(first.paired!.seedsNeeded! < first.seedsNeeded!, JSON.stringify(first));
});
