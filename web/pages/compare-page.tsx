import { Fragment } from "preact";
import { Island } from "../components/island.tsx";
import { formatNumber } from "../components/format.ts";
import { ProblemComparisons } from "../components/problem-comparisons.tsx";
import type { CompareData, CompareQuery } from "../data/compare-data.ts";
import { ChartSet } from "../islands/chart-set.tsx";
import { RUN_KINDS, SELECTION_COLUMNS } from "../../analysis/mod.ts";

const pct = (x: number) => formatNumber(100 * x, 3);

/**
 * Runs grouped by a config key: mean ± SEM, differences against the baseline with CI and p,
 * the pairwise matrix, and overlaid curves. The form selects runs by id or by filters (a SQL
 * predicate, status, kind, name); with none, the completed training runs.
 *
 * @example
 * ```tsx
 * import type { Analysis } from "../../analysis/mod.ts";
 * import { type CompareQuery, compareRuns } from "../data/compare-data.ts";
 * declare const analysis: Analysis;
 * const q: CompareQuery = { runs: ["r1", "r2"], groupBy: "estimator", baseline: "grpo" };
 * <ComparePage query={q} data={await compareRuns(analysis, q.runs, q)} error={null} />
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
          runs{" "}
          <input
            name="runs"
            size={30}
            value={query.runs.join(",")}
            placeholder="ids, comma-separated"
          />
        </label>
        <label title={`a SQL boolean expression over ${SELECTION_COLUMNS}`}>
          where <input name="where" size={40} value={query.where ?? ""} placeholder="seed < 3" />
        </label>
        <label>
          status{" "}
          <input
            name="status"
            size={12}
            value={query.status ?? ""}
            placeholder={query.runs.length ? "any" : "completed"}
          />
        </label>
        <label>
          kind{" "}
          <select name="kind">
            {["", ...RUN_KINDS, "all"].map((k) => (
              <option key={k} value={k} selected={(query.kind ?? "") === k}>
                {k || (query.runs.length ? "any (runs named)" : "default: training")}
              </option>
            ))}
          </select>
        </label>
        <label title="with *, ? or [...] a glob on the whole name or id, else a substring">
          name <input name="name" size={12} value={query.name ?? ""} placeholder="glob or text" />
        </label>
        <label title="runs hidden with deno task runs hide are left out unless ticked">
          <input type="checkbox" name="hidden" value="1" checked={query.hidden} /> hidden runs
        </label>
        <label>
          group by <input name="by" value={query.groupBy} size={12} />
        </label>
        <label>
          baseline <input name="baseline" value={query.baseline ?? ""} size={10} />
        </label>
        <button type="submit">compare</button>
      </form>
      {error && <pre class="error">{error}</pre>}
      {data && (
        <p class="selection">
          {data.runs.length} runs selected: {data.selection}.
        </p>
      )}
      {data && <CompareTables data={data} />}
    </>
  );
}

function CompareTables({ data }: { data: CompareData }) {
  const r = data.report;
  const cell = (group: string, benchmark: string) =>
    r.accuracy.find((a) => a.group === group && a.benchmark === benchmark);
  const groups = r.groups.map((g) => g.value);
  const runsOf = new Map(r.groups.map((g) => [g.value, g.runs.length]));
  return (
    <>
      <table class="groups">
        <thead>
          <tr>
            <th>{r.groupBy}</th>
            <th>runs</th>
          </tr>
        </thead>
        <tbody>
          {r.groups.map((g) => (
            <tr key={g.value}>
              <td>{g.value}</td>
              <td>
                {g.runs.map((id, i) => (
                  <Fragment key={id}>
                    {i > 0 && ", "}
                    <a class="run" href={`/runs/${encodeURIComponent(id)}`}>{id}</a>
                  </Fragment>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Accuracy (%) by {r.groupBy}: mean ± SEM over seeds, one column per benchmark and k</h2>
      {r.unevaluated.length > 0 && (
        <p class="notice">Runs without an evaluation: {r.unevaluated.join(", ")}.</p>
      )}
      {r.averageOf.length === 0 && r.benchmarks.length > 0 && (
        <p class="notice">
          No benchmark at one k is shared by every selected run, so there is no average column.
        </p>
      )}
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
                const n = c && c.n !== runsOf.get(g.value) ? ` (n=${c.n})` : "";
                return (
                  <td class="num" key={b}>
                    {c ? `${pct(c.mean)}${c.sem === null ? "" : ` ± ${pct(c.sem)}`}${n}` : "—"}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <h2>What else differs between the groups</h2>
      {r.configDifferences.length === 0
        ? (
          <p class="config-differences">
            Nothing: the groups' configs differ only in {r.groupBy} (and seeds, names, stores).
          </p>
        )
        : (
          <>
            <p class="notice config-differences">
              These config keys differ between the groups as well as{" "}
              {r.groupBy}: a difference between groups that differ in one is not{" "}
              {r.groupBy}'s alone (marked confounded below).
            </p>
            <table class="config-differences">
              <thead>
                <tr>
                  <th>key</th>
                  {groups.map((g) => <th key={g}>{g}</th>)}
                </tr>
              </thead>
              <tbody>
                {r.configDifferences.map((d) => (
                  <tr key={d.key}>
                    <td>{d.key}</td>
                    {groups.map((g) => <td key={g}>{d.values[g].join(", ")}</td>)}
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
      <h2>Difference vs baseline {r.baseline} (Welch; paired over seeds where both ran them)</h2>
      {r.vsBaselineEmpty !== null && <p class="notice empty-reason">{r.vsBaselineEmpty}.</p>}
      {r.vsBaselineEmpty === null && (
        <table class="vs-baseline">
          <thead>
            <tr>
              <th>{r.groupBy}</th>
              <th>benchmark</th>
              <th>Δ (pp)</th>
              <th>95% CI</th>
              <th>p</th>
              <th>paired 95% CI</th>
              <th>paired p</th>
              <th title="correlation of the two groups' accuracies over the shared seeds">r</th>
              <th title="Welch's standard error over the paired test's">SE ratio</th>
              <th>confounded by</th>
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
                <td class="num">
                  {c.paired ? `[${pct(c.paired.ci[0])}, ${pct(c.paired.ci[1])}]` : "not paired"}
                </td>
                <td class="num">{c.paired ? formatNumber(c.paired.p, 3) : "—"}</td>
                <td class="num">
                  {c.paired?.correlation != null ? formatNumber(c.paired.correlation, 2) : "—"}
                </td>
                <td class="num">
                  {c.paired?.seRatio != null ? `${formatNumber(c.paired.seRatio, 2)}×` : "—"}
                </td>
                <td class={c.confounds.length ? "confounded" : undefined}>
                  {c.confounds.length ? c.confounds.join(", ") : "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ProblemComparisons report={r} />
      <h2>Pairwise (average accuracy, row − column, pp; p in parentheses)</h2>
      {r.pairwiseEmpty !== null && <p class="notice empty-reason">{r.pairwiseEmpty}.</p>}
      {r.pairwiseEmpty === null && (
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
      )}
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
        props={{ charts: data.curves }}
      />
    </>
  );
}
