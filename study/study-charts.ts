/**
 * The report's figures, drawn from the study results: accuracy per cell (bars, 95% CI), and per
 * comparison the per-agent gradient norm over steps of each cell, the baseline's per-agent
 * Lemma 4.2 multiplier over steps, and the critic improvement rate per debate round.
 */
import { barChartSvg, type BarGroup } from "./bar-chart-svg.ts";
import { lineChartSvg, type LineSeries } from "./line-chart-svg.ts";
import type { SampleStat } from "./sample-stat.ts";
import type { CellResult, ComparisonResult, RunSeries, StudyResults } from "./study-results.ts";

/** One figure: its file name in the output folder and the report section it belongs to. */
export interface ChartFile {
  readonly file: string;
  /** "accuracy", or the id of the comparison it illustrates. */
  readonly section: string;
  readonly alt: string;
  readonly svg: string;
}

/** The mean over runs at each step (finite values only; NaN where no run has one). */
function meanByStep(runs: readonly RunSeries[]): { x: number; y: number }[] {
  const steps = [...new Set(runs.flatMap((r) => r.steps))].sort((a, b) => a - b);
  return steps.map((step) => {
    const ys = runs.flatMap((r) => {
      const i = r.steps.indexOf(step);
      return i >= 0 && Number.isFinite(r.values[i]) ? [r.values[i]] : [];
    });
    return { x: step, y: ys.length ? ys.reduce((s, v) => s + v, 0) / ys.length : NaN };
  });
}

function seriesOf(name: string, runs: readonly RunSeries[], colour: number): LineSeries[] {
  if (runs.length === 0) return [];
  return [
    ...runs.map((r) => ({
      name: `${name} seed ${r.seed}`,
      colour,
      faint: true,
      points: r.steps.map((x, i) => ({ x, y: r.values[i] })),
    })),
    { name: `${name} (mean of ${runs.length})`, colour, points: meanByStep(runs) },
  ];
}

function hasFinite(series: readonly LineSeries[]): boolean {
  return series.some((s) => s.points.some((p) => Number.isFinite(p.y)));
}

/** A bar from a per-run statistic, in percent, its CI clamped to what a rate can be. */
function rateBar(series: string, stat: SampleStat) {
  const clamp = (v: number) => Math.min(100, Math.max(0, 100 * v));
  return {
    series,
    value: stat.mean === null ? NaN : 100 * stat.mean,
    low: stat.ci ? clamp(stat.ci[0]) : undefined,
    high: stat.ci ? clamp(stat.ci[1]) : undefined,
  };
}

function accuracyChart(cells: readonly CellResult[]): ChartFile[] {
  const done = cells.filter((c) => c.runs.length > 0);
  if (done.length === 0) return [];
  const ks = [...new Set(done.map((c) => c.k))];
  const k = ks.length === 1 ? String(ks[0]) : "k";
  const groups: BarGroup[] = done.map((c) => ({
    label: c.id,
    bars: [rateBar(`avg@${k}`, c.accuracy.avg), rateBar(`pass@${k}`, c.accuracy.pass)],
  }));
  return [{
    file: "accuracy.svg",
    section: "accuracy",
    alt: `avg@${k} and pass@${k} per cell, mean over seeds with 95% CI`,
    svg: barChartSvg({
      title: `Held-out accuracy per cell (mean over seeds, 95% CI)`,
      yLabel: "accuracy (%)",
      groups,
      width: 860,
    }),
  }];
}

function gradNormCharts(comparison: ComparisonResult, cells: readonly CellResult[]): ChartFile[] {
  const agents = [...new Set(cells.flatMap((c) => c.agents.map((a) => a.agent)))].sort();
  return agents.flatMap((agent) => {
    const series = cells.flatMap((c, i) =>
      seriesOf(c.id, c.agents.find((a) => a.agent === agent)?.gradNorms ?? [], i)
    );
    if (!hasFinite(series)) return [];
    return [{
      file: `${comparison.id}-grad-norm-${agent}.svg`,
      section: comparison.id,
      alt: `gradient norm of ${agent} over training steps`,
      svg: lineChartSvg({
        title: `${agent}: gradient norm per step (before clipping)`,
        xLabel: "training step",
        yLabel: "gradient norm",
        series,
      }),
    }];
  });
}

function multiplierChart(comparison: ComparisonResult, baseline: CellResult): ChartFile[] {
  const series = baseline.agents.flatMap((a, i) => seriesOf(a.agent, a.multipliers, i));
  if (!hasFinite(series)) return [];
  return [{
    file: `${comparison.id}-lemma-multiplier.svg`,
    section: comparison.id,
    alt: `Lemma 4.2 multiplier per agent over training under ${baseline.id}`,
    svg: lineChartSvg({
      title: `${baseline.id}: (σ_k² + (μ_k − μ)²) / σ² per agent`,
      xLabel: "training step",
      yLabel: "multiplier (mean over prompt groups)",
      series,
      reference: { y: 1, label: "1 = no mismatch" },
    }),
  }];
}

function criticChart(comparison: ComparisonResult, cells: readonly CellResult[]): ChartFile[] {
  const groups: BarGroup[] = cells.filter((c) => c.critic.length > 0).map((c) => ({
    label: c.id,
    bars: c.critic.map((r) => rateBar(`critic round ${r.round}`, r.improvement)),
  }));
  if (groups.length === 0) return [];
  return [{
    file: `${comparison.id}-critic-improvement.svg`,
    section: comparison.id,
    alt: "critic improvement rate per debate round, mean over seeds with 95% CI",
    svg: barChartSvg({
      title: "Critic improvement rate per round (wrong generator majority turned right)",
      yLabel: "questions (%)",
      groups,
    }),
  }];
}

/**
 * Every figure of the report; figures without data yet (pending cells) are left out.
 *
 * @example
 * ```ts
 * import type { StudyResults } from "./mod.ts";
 * declare const results: StudyResults;
 * for (const c of studyCharts(results)) await Deno.writeTextFile(`docs/study/${c.file}`, c.svg);
 * ```
 */
export function studyCharts(results: StudyResults): ChartFile[] {
  const byId = new Map(results.cells.map((c) => [c.id, c]));
  return [
    ...accuracyChart(results.cells),
    ...results.comparisons.flatMap((comparison) => {
      const cells = [comparison.baseline, ...comparison.cells].map((id) => byId.get(id)!)
        .filter((c) => c.runs.length > 0);
      return comparison.charts.flatMap((kind) => {
        if (kind === "grad-norm") return gradNormCharts(comparison, cells);
        if (kind === "critic-improvement") return criticChart(comparison, cells);
        const baseline = byId.get(comparison.baseline)!;
        return baseline.runs.length > 0 ? multiplierChart(comparison, baseline) : [];
      });
    }),
  ];
}
