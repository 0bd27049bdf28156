import { Island } from "../components/island.tsx";
import { formatNumber } from "../components/format.ts";
import type { CompareData } from "../data/compare-data.ts";
import { ChartSet } from "../islands/chart-set.tsx";

/** The Compare page's form values. */
export interface CompareQuery {
  readonly runs: readonly string[];
  readonly groupBy: string;
  readonly baseline?: string;
}

const pct = (x: number) => formatNumber(100 * x, 3);

/**
 * Runs grouped by a config key: mean ± SEM, differences against the baseline with CI and p,
 * the pairwise matrix, and overlaid curves.
 *
 * @example
 * ```tsx
 * <ComparePage query={q} data={await compareRuns(db, q.runs, q)} error={null} />
 * ```
 */
export function ComparePage(
  { query, data, error }: { query: CompareQuery; data: CompareData | null; error: string | null },
) {
  return (
    <>
      <h1>Compare</h1>
      <form class="toolbar" method="get" action="/compare">
        <label>
          runs <input name="runs" size={50} value={query.runs.join(",")} placeholder="all runs" />
        </label>
        <label>
          group by <input name="by" value={query.groupBy} size={14} />
        </label>
        <label>
          baseline <input name="baseline" value={query.baseline ?? ""} size={10} />
        </label>
        <button type="submit">compare</button>
      </form>
      {error && <pre class="error">{error}</pre>}
      {data && <CompareTables data={data} />}
    </>
  );
}

function CompareTables({ data }: { data: CompareData }) {
  const r = data.report;
  const cell = (group: string, benchmark: string) =>
    r.accuracy.find((a) => a.group === group && a.benchmark === benchmark);
  const groups = r.groups.map((g) => g.value);
  return (
    <>
      <h2>Accuracy (avg@k, %) by {r.groupBy}: mean ± SEM over seeds</h2>
      <table class="accuracy">
        <thead>
          <tr>
            <th>{r.groupBy}</th>
            <th>runs</th>
            {r.benchmarks.map((b) => <th key={b}>{b}</th>)}
          </tr>
        </thead>
        <tbody>
          {r.groups.map((g) => (
            <tr key={g.value}>
              <td>{g.value}{g.value === r.baseline ? " (baseline)" : ""}</td>
              <td class="num">{g.runs.length}</td>
              {r.benchmarks.map((b) => {
                const c = cell(g.value, b);
                return (
                  <td class="num" key={b}>
                    {c ? `${pct(c.mean)}${c.sem === null ? "" : ` ± ${pct(c.sem)}`}` : "—"}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Difference vs baseline {r.baseline} (Welch, 95% CI)</h2>
      <table class="vs-baseline">
        <thead>
          <tr>
            <th>{r.groupBy}</th>
            <th>benchmark</th>
            <th>Δ (pp)</th>
            <th>95% CI</th>
            <th>p</th>
          </tr>
        </thead>
        <tbody>
          {r.vsBaseline.map((c) => (
            <tr key={`${c.group}-${c.benchmark}`}>
              <td>{c.group}</td>
              <td>{c.benchmark}</td>
              <td class="num">{pct(c.diff)}</td>
              <td class="num">
                {c.welch ? `[${pct(c.welch.ci[0])}, ${pct(c.welch.ci[1])}]` : "n/a (one run)"}
              </td>
              <td class="num">{c.welch ? formatNumber(c.welch.p, 3) : "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Pairwise (average accuracy, row − column, pp; p in parentheses)</h2>
      <table class="pairwise">
        <thead>
          <tr>
            <th />
            {groups.map((g) => <th key={g}>{g}</th>)}
          </tr>
        </thead>
        <tbody>
          {groups.map((row) => (
            <tr key={row}>
              <th>{row}</th>
              {groups.map((col) => {
                const c = r.pairwise.find((p) => p.group === row && p.against === col);
                return (
                  <td class="num" key={col}>
                    {row === col || !c
                      ? "—"
                      : `${pct(c.diff)}${c.welch ? ` (${formatNumber(c.welch.p, 2)})` : ""}`}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>
        Stability (gradient norms per worker group, spike = {r.spikeMultiple}× running median)
      </h2>
      <table>
        <thead>
          <tr>
            <th>{r.groupBy}</th>
            <th>wg</th>
            <th>median</th>
            <th>p99</th>
            <th>max/median</th>
            <th>spikes</th>
            <th>non-finite</th>
          </tr>
        </thead>
        <tbody>
          {r.stability.map((s) => (
            <tr key={`${s.group}-${s.wg}`}>
              <td>{s.group}</td>
              <td>{s.wg}</td>
              <td class="num">{formatNumber(s.median)}</td>
              <td class="num">{formatNumber(s.p99)}</td>
              <td class="num">{formatNumber(s.maxOverMedian)}</td>
              <td class="num">{formatNumber(s.spikes)}</td>
              <td class="num">{formatNumber(s.nonFinite)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Overlaid curves</h2>
      <Island
        name="chart-set"
        component={ChartSet}
        props={{ charts: [data.rewardCurves, data.evalCurves] }}
      />
    </>
  );
}
