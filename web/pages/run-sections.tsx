import { formatNumber } from "../components/format.ts";
import type { EvalRow, PlacementCell } from "../data/run-details.ts";
import type { TrajectoryPage } from "../data/trajectory-page.ts";

/**
 * The evaluation table, newest step first.
 *
 * @example
 * ```tsx
 * <EvalTable evals={await runEvals(db, runId)} />
 * ```
 */
export function EvalTable({ evals }: { evals: readonly EvalRow[] }) {
  if (evals.length === 0) return <p class="muted">No evaluation yet.</p>;
  return (
    <table class="evals">
      <thead>
        <tr>
          <th>step</th>
          <th>benchmark</th>
          <th>problems</th>
          <th>avg@k</th>
          <th>pass@k</th>
        </tr>
      </thead>
      <tbody>
        {evals.map((e) => (
          <tr key={`${e.step}-${e.benchmark}`}>
            <td class="num">{e.step}</td>
            <td>{e.benchmark}</td>
            <td class="num">{e.problems}</td>
            <td class="num" title={`avg@${e.k}`}>{formatNumber(e.avgAtK)}</td>
            <td class="num" title={`pass@${e.k}`}>{formatNumber(e.passAtK)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Worker-group placements as lanes over steps: a filled cell when the group was loaded in that
 * step, with its load/offload counts in the tooltip.
 *
 * @example
 * ```tsx
 * <PlacementTimeline cells={await recentPlacements(db, runId, 40)} />
 * ```
 */
export function PlacementTimeline({ cells }: { cells: readonly PlacementCell[] }) {
  if (cells.length === 0) return <p class="muted">No worker-group placements recorded.</p>;
  const wgs = [...new Set(cells.map((c) => c.wg))].sort();
  const steps = [...new Set(cells.map((c) => c.step))].sort((a, b) => a - b);
  const cellW = Math.max(8, Math.min(32, Math.floor(1000 / steps.length)));
  const left = 110, laneH = 26;
  const width = left + Math.max(steps.length * cellW, 120) + 10;
  const height = wgs.length * laneH + 24;
  const at = new Map(cells.map((c) => [`${c.wg}\u0000${c.step}`, c]));
  return (
    <svg
      class="timeline"
      width={width}
      height={height}
      role="img"
      aria-label="worker-group load/offload timeline"
    >
      {wgs.map((wg, lane) => (
        <g key={wg}>
          <text x={0} y={lane * laneH + 15}>{wg}</text>
          {steps.map((step, i) => {
            const c = at.get(`${wg}\u0000${step}`);
            return (
              <rect
                key={step}
                class={c && c.loads > 0 ? "on" : "off"}
                x={left + i * cellW}
                y={lane * laneH + 3}
                width={cellW - 2}
                height={laneH - 6}
              >
                <title>
                  {c
                    ? `step ${step} ${wg}: loaded ${c.loads}×, offloaded ${c.offloads}× on ${c.device} (${c.bytes} bytes)`
                    : `step ${step} ${wg}: not placed`}
                </title>
              </rect>
            );
          })}
        </g>
      ))}
      <text x={left} y={height - 4}>step {steps[0]}</text>
      {steps.length > 1 && (
        <text x={left + steps.length * cellW} y={height - 4} text-anchor="end">
          step {steps[steps.length - 1]}
        </text>
      )}
    </svg>
  );
}

/**
 * One page of a step's trajectories, every turn of every agent with its reward and advantage,
 * and links to the neighbouring pages and steps.
 *
 * @example
 * ```tsx
 * <TrajectoryBrowser runId="run-1" lastStep={99} page={await trajectoryPage(db, "run-1", at)} />
 * ```
 */
export function TrajectoryBrowser(
  { runId, lastStep, page }: { runId: string; lastStep: number; page: TrajectoryPage },
) {
  const pages = Math.max(1, Math.ceil(page.total / page.pageSize));
  const href = (step: number, p: number) =>
    `/runs/${encodeURIComponent(runId)}?step=${step}&page=${p}#trajectories`;
  return (
    <div class="trajectories">
      <form
        class="toolbar pager"
        method="get"
        action={`/runs/${encodeURIComponent(runId)}#trajectories`}
      >
        {page.step > 0 && <a href={href(page.step - 1, 0)}>◀ step {page.step - 1}</a>}
        <label>
          step <input name="step" type="number" min={0} max={lastStep} value={page.step} />
        </label>
        <input type="hidden" name="page" value="0" />
        {page.step < lastStep && <a href={href(page.step + 1, 0)}>step {page.step + 1} ▶</a>}
        {page.page > 0 && <a href={href(page.step, page.page - 1)}>previous page</a>}
        <span>page {page.page + 1} of {pages} ({page.total} trajectories)</span>
        {page.page + 1 < pages && <a href={href(page.step, page.page + 1)}>next page</a>}
      </form>
      {page.rows.map((t) => (
        <div class="trajectory" key={t.trajectory} data-trajectory={t.trajectory}>
          <h3>
            {t.trajectory} · problem {t.problemId} · final answer {t.finalAnswer ?? "none"}{" "}
            <span class={t.correct ? "ok" : "bad"}>{t.correct ? "✓ correct" : "✗ wrong"}</span>{" "}
            · reward {formatNumber(t.reward)}
          </h3>
          <table>
            <thead>
              <tr>
                <th>turn</th>
                <th>agent</th>
                <th>worker group</th>
                <th>tokens</th>
                <th>finish</th>
                <th>answer</th>
                <th>mean logprob</th>
                <th>reward</th>
                <th>advantage</th>
                <th>text</th>
              </tr>
            </thead>
            <tbody>
              {t.turns.map((u) => (
                <tr key={u.turn}>
                  <td class="num">{u.turn}</td>
                  <td>{u.agent}</td>
                  <td>{u.wg}</td>
                  <td class="num">{u.responseTokens}</td>
                  <td>{u.finishReason}</td>
                  <td class={u.correct === null ? "" : u.correct ? "ok" : "bad"}>
                    {u.parsedAnswer ?? "—"}
                  </td>
                  <td class="num">{formatNumber(u.meanLogprob)}</td>
                  <td class="num">{formatNumber(u.reward)}</td>
                  <td class="num">{formatNumber(u.advantage)}</td>
                  <td class="text">{u.text ?? "—"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
    </div>
  );
}
