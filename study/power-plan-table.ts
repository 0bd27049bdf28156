/**
 * The planned-power table (`deno task study power`, and the report's "Power planned before the
 * grid"): one row per claim of a grid, from an earlier study's per-seed values (plan-power.ts).
 */
import { figure, points, signedPoints } from "../analysis/mod.ts";
import { SEED_CAP } from "./claim-power.ts";
import type { ClaimMetric } from "./grid-schema.ts";
import type { PowerRow } from "./plan-power.ts";

/** How to read the table, for the CLI's heading and the report's section alike. */
export const POWER_PLAN_LEGEND = "Accuracy differences in points; a range is the evaluation " +
  "resized (training noise held, problem noise rescaled, study/claim-power.ts). Welch's test, " +
  "then the paired t-test where the earlier runs of both cells pair by seed: the one-sample test " +
  "of the per-seed differences, r the correlation of the cells' per-seed values; seeds needed " +
  "are seeds per cell (pairs) either way.";

const RATES: readonly ClaimMetric[] = ["avg@k", "pass@k", "critic-improvement"];

function units(metric: ClaimMetric, x: number | null, signed = false): string {
  if (x === null) return "n/a";
  if (RATES.includes(metric)) return signed ? signedPoints(x) : points(x);
  return (signed && x >= 0 ? "+" : "") + figure(x);
}

function claimName(r: PowerRow): string {
  const who = r.agent === null ? "" : `${r.agent}: `;
  const vs = r.against === null ? "vs 1" : `vs ${r.against}`;
  return `${who}${r.metric} ${r.cell} ${r.expect} ${vs}`;
}

function range(m: ClaimMetric, low: number | null, high: number | null): string {
  if (high === null) return "n/a";
  return low === null || low === high ? units(m, high) : `${units(m, low)}–${units(m, high)}`;
}

/** The paired test's columns: sd of the differences (r), detectable, power, seeds needed. */
function pairedCells(r: PowerRow): string[] {
  const q = r.power.paired ?? null;
  if (r.against === null) return ["–", "–", "–", "–"];
  if (q === null) return ["not paired", "", "", ""];
  if (q.sd === null || q.mde === null) return ["n/a", "", "", ""];
  const m = r.metric;
  const corr = q.correlation === null ? "" : ` (r ${q.correlation.toFixed(2)})`;
  return [
    `${range(m, q.sdLow, q.sd)}${corr}`,
    range(m, q.mdeLow, q.mde),
    q.powerAtPaper === null ? "n/a" : `${(100 * q.powerAtPaper).toFixed(1)}%`,
    r.power.paperEffect === null
      ? "n/a"
      : q.seedsNeeded === null
      ? `> ${SEED_CAP}`
      : `${q.seedsNeeded}`,
  ];
}

/**
 * One claim's row of the planned-power table: its comparison and claim, seeds, the per-seed
 * spread, what Welch's test detects, the paper's effect with the power at it and the seeds it
 * needs, then the same for the paired test (POWER_PLAN_COLUMNS); accuracy in points.
 *
 * @example
 * ```ts
 * import { POWER_PLAN_COLUMNS, powerPlanRow } from "./power-plan-table.ts";
 * import type { PowerRow } from "./plan-power.ts";
 * declare const rows: readonly PowerRow[];
 * const table = [POWER_PLAN_COLUMNS, ...rows.map(powerPlanRow)]; // 13 cells a row
 * ```
 */
export function powerPlanRow(r: PowerRow): string[] {
  const p = r.power;
  const m = r.metric;
  const sd = p.spread.map((s) =>
    s.sd === s.sdLow ? units(m, s.sd) : `${units(m, s.sdLow)}–${units(m, s.sd)}`
  ).join(" / ");
  const mde = p.mde === null
    ? "n/a"
    : p.mde === p.mdeLow
    ? units(m, p.mde)
    : `${units(m, p.mdeLow)}–${units(m, p.mde)}`;
  return [
    r.comparison,
    claimName(r),
    String(p.seeds),
    sd || "n/a",
    mde,
    units(m, p.paperEffect, true),
    p.powerAtPaper === null ? "n/a" : `${(100 * p.powerAtPaper).toFixed(1)}%`,
    p.paperEffect === null ? "n/a" : p.seedsNeeded === null ? `> ${SEED_CAP}` : `${p.seedsNeeded}`,
    ...pairedCells(r),
    [p.note, p.paired?.note ?? null].filter((x) => x !== null).join("; "),
  ];
}

/** The planned-power table's columns, in powerPlanRow's order. */
export const POWER_PLAN_COLUMNS: readonly string[] = [
  "comparison",
  "claim",
  "seeds",
  "per-seed sd",
  "detectable",
  "paper",
  "power at paper",
  "seeds needed",
  "paired: sd of differences",
  "paired: detectable",
  "paired: power at paper",
  "paired: seeds needed",
  "note",
];
