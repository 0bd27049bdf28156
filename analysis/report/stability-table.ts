import { type GradNormStability, gradNormStability, mean } from "../stats/mod.ts";
import type { RunGroup } from "./group-runs.ts";

/**
 * Grad-norm stability of one worker group within one run group: a run's figures
 * (`GradNormStability`) averaged over runs, except `spikes` and `nonFinite`, totals over runs.
 */
export interface StabilityRow extends
  Pick<
    GradNormStability,
    "median" | "p99" | "max" | "maxOverMedian" | "spikes" | "nonFinite"
  > {
  readonly kind: "stability-row";
  readonly group: string;
  readonly wg: string;
  readonly runs: number;
}

/** Mean Lemma 4.2 multiplier of one agent within one run group (mean over steps, then runs). */
export interface LemmaRow {
  readonly kind: "lemma-row";
  readonly group: string;
  readonly agent: string;
  readonly runs: number;
  readonly multiplier: number;
}

/**
 * Per group and worker group: grad-norm median, p99, max, max/median (each averaged over runs),
 * spike and non-finite update counts (summed over runs; a step has several updates with PPO
 * epochs or mini-batches).
 *
 * @example
 * ```ts
 * import type { RunGroup } from "./group-runs.ts";
 * import { stabilityTable } from "./stability-table.ts";
 * declare const groups: readonly RunGroup[];
 *
 * stabilityTable(groups, 10).map((r) => [r.group, r.wg, r.spikes]);
 * ```
 */
export function stabilityTable(groups: readonly RunGroup[], spikeMultiple: number): StabilityRow[] {
  return groups.flatMap((g) => {
    const wgs = [...new Set(g.runs.flatMap((r) => r.gradNorms.map((n) => n.wg)))].sort();
    return wgs.map((wg) => {
      const per = g.runs.flatMap((r) =>
        r.gradNorms.filter((n) => n.wg === wg && n.norms.some(Number.isFinite))
          .map((n) => gradNormStability(n.norms, spikeMultiple))
      );
      // A run whose median norm is 0 (no signal in most steps) has no finite max/median; the
      // mean is over the runs where a figure is finite, NaN when there is none.
      const avg = (f: (s: (typeof per)[number]) => number) => {
        const xs = per.map(f).filter(Number.isFinite);
        return xs.length ? mean(xs) : NaN;
      };
      return Object.freeze({
        kind: "stability-row",
        group: g.value,
        wg,
        runs: per.length,
        median: avg((s) => s.median),
        p99: avg((s) => s.p99),
        max: avg((s) => s.max),
        maxOverMedian: avg((s) => s.maxOverMedian),
        spikes: per.reduce((s, x) => s + x.spikes, 0),
        nonFinite: per.reduce((s, x) => s + x.nonFinite, 0),
      });
    });
  });
}

/** Per group and agent: the Lemma 4.2 multiplier, mean over finite steps then over runs. */
export function lemmaTable(groups: readonly RunGroup[]): LemmaRow[] {
  return groups.flatMap((g) => {
    const agents = [...new Set(g.runs.flatMap((r) => r.lemma.map((l) => l.agent)))].sort();
    return agents.map((agent) => {
      const perRun = g.runs.flatMap((r) =>
        r.lemma.filter((l) => l.agent === agent)
          .map((l) => l.multipliers.filter(Number.isFinite))
          .filter((xs) => xs.length > 0)
          .map((xs) => mean(xs))
      );
      return Object.freeze({
        kind: "lemma-row",
        group: g.value,
        agent,
        runs: perRun.length,
        multiplier: perRun.length ? mean(perRun) : NaN,
      });
    });
  });
}
