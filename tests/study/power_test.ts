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
const V1_JSON = join(ROOT, "docs/study/study.json");
const V1_README = join(ROOT, "docs/study/README.md");
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
  assert.match(one.note!, /1 earlier run/);
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
  const committed = await Deno.readTextFile(V1_README);
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
