import type { ProblemComparison, Report } from "../../analysis/mod.ts";
import { formatNumber } from "./format.ts";

const pct = (x: number) => formatNumber(100 * x, 3);

function testName(c: ProblemComparison): string {
  return c.mcnemar ? "McNemar exact" : c.paired ? "paired t" : "—";
}

/**
 * The report's per-problem view against the baseline, as `deno task report` prints it: for each
 * group and benchmark both were graded on the same problems (one benchmark SHA-256), the
 * problems, the mean difference with its CI, how many problems each side is ahead on, the test
 * (McNemar's exact test with one right/wrong outcome per problem and group, else the paired
 * t-test over problems), the correlation and the variance pairing removes; where the problems
 * differ, why there is no such view; and, folded, the problems the two differ on.
 *
 * @example
 * ```tsx
 * import type { Report } from "../../analysis/mod.ts";
 * declare const data: { report: Report };
 * <ProblemComparisons report={data.report} />
 * ```
 */
export function ProblemComparisons({ report: r }: { report: Report }) {
  const paired = r.vsBaselineByProblem.filter((c) => c.unpaired === null);
  const unpaired = r.vsBaselineByProblem.filter((c) => c.unpaired !== null);
  return (
    <section class="by-problem">
      <h2>Difference vs baseline {r.baseline}, problem by problem (same benchmark SHA-256)</h2>
      {r.vsBaselineByProblemEmpty !== null && (
        <p class="notice empty-reason">{r.vsBaselineByProblemEmpty}.</p>
      )}
      {paired.length > 0 && (
        <table class="by-problem">
          <thead>
            <tr>
              <th>{r.groupBy}</th>
              <th>benchmark</th>
              <th>problems</th>
              <th title="mean over problems of the group's accuracy minus the baseline's">
                Δ (pp)
              </th>
              <th title="the paired t-test's over problems">95% CI</th>
              <th title="problems the group does better on than the baseline">ahead</th>
              <th title="problems the baseline does better on">behind</th>
              <th>level</th>
              <th>test</th>
              <th>p</th>
              <th title="correlation of the two groups' per-problem accuracies">r</th>
              <th title="Welch's standard error over the paired test's">SE ratio</th>
            </tr>
          </thead>
          <tbody>
            {paired.map((c) => (
              <tr key={`${c.group}-${c.benchmark}`}>
                <td>{c.group}</td>
                <td>{c.benchmark}</td>
                <td class="num">{c.problems.length}</td>
                <td class="num">{pct(c.diff!)}</td>
                <td class="num">
                  {c.paired ? `[${pct(c.paired.ci[0])}, ${pct(c.paired.ci[1])}]` : "—"}
                </td>
                <td class="num">{c.ahead}</td>
                <td class="num">{c.behind}</td>
                <td class="num">{c.level}</td>
                <td>{testName(c)}</td>
                <td class="num">{formatNumber(c.p, 3)}</td>
                <td class="num">{formatNumber(c.paired?.correlation, 2)}</td>
                <td class="num">
                  {c.paired?.seRatio != null ? `${formatNumber(c.paired.seRatio, 2)}×` : "—"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {unpaired.length > 0 && (
        <ul class="notice unpaired">
          {unpaired.map((c) => (
            <li key={`${c.group}-${c.benchmark}`}>
              {r.groupBy}={c.group} on {c.benchmark}: not paired problem by problem: {c.unpaired}.
            </li>
          ))}
        </ul>
      )}
      {paired.filter((c) => c.ahead + c.behind > 0).map((c) => (
        <details key={`${c.group}-${c.benchmark}`} class="discordant">
          <summary>
            {c.group} against {c.against} on {c.benchmark}: the {c.ahead + c.behind}{" "}
            problems they differ on
          </summary>
          <table>
            <thead>
              <tr>
                <th>problem</th>
                <th>{c.group} (%)</th>
                <th>{c.against} (%)</th>
              </tr>
            </thead>
            <tbody>
              {c.problems.filter((p) =>
                p.accuracy !== p.againstAccuracy
              ).map((p) => (
                <tr key={p.problem}>
                  <td>{p.problem}</td>
                  <td class="num">{pct(p.accuracy)}</td>
                  <td class="num">{pct(p.againstAccuracy)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ))}
    </section>
  );
}
