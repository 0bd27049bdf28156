import { sql } from "kysely";
import { openDashboardSource } from "./server/dashboard-source.ts";
import { chartFromRows } from "./components/chart-data.ts";
await using s = await openDashboardSource("/tmp/prof/events.sqlite");
await s.read(async (a) => {
  const runId = "big";
  let t = performance.now();
  const lap = (l: string) => { const n = performance.now(); console.log(l, (n - t).toFixed(0), "ms"); t = n; };
  const r1 = (await sql<any>`SELECT step AS x, 'reward' AS label, avg(total) AS value, count(*) AS n FROM rewards
    WHERE run_id = ${runId} AND phase = 'rollout' AND agent IS NULL GROUP BY step ORDER BY x`.execute(a.db)).rows; lap("reward q " + r1.length);
  const raw = await a.conn.runAndReadAll(`SELECT step AS x, 'reward' AS label, avg(total) AS value, count(*) AS n FROM rewards
    WHERE run_id = 'big' AND phase = 'rollout' AND agent IS NULL GROUP BY step ORDER BY x`); raw.getRowObjectsJS(); lap("reward raw conn");
  const r2 = (await sql<any>`SELECT step AS x, wg AS label, avg(grad_norm) FILTER (isfinite(grad_norm)) AS value,
      count(*) FILTER (isfinite(grad_norm)) AS n
    FROM grad_steps WHERE run_id = ${runId} GROUP BY step, wg ORDER BY x, label`.execute(a.db)).rows; lap("grad q " + r2.length);
  const r3 = (await sql<any>`SELECT g.step AS x, e.key AS label,
      avg(CAST(e.value AS DOUBLE)) FILTER (isfinite(CAST(e.value AS DOUBLE))) AS value,
      count(*) FILTER (isfinite(CAST(e.value AS DOUBLE))) AS n
    FROM grad_steps g, json_each(g.agent_grad_norms_json) e
    WHERE g.run_id = ${runId} GROUP BY g.step, e.key ORDER BY x, label`.execute(a.db)).rows; lap("agent q " + r3.length);
  const r4 = (await sql<any>`SELECT step AS x, coalesce(agent, 'global') AS label, avg(mu) AS value, avg(sigma) AS sigma,
      count(*) AS n FROM baselines WHERE run_id = ${runId} GROUP BY step, agent ORDER BY x, label`.execute(a.db)).rows; lap("baselines q " + r4.length);
  const r5 = (await sql<any>`SELECT step AS x, agent AS label, avg(multiplier) AS value, count(multiplier) AS n
    FROM lemma_multipliers WHERE run_id = ${runId} GROUP BY step, agent ORDER BY x, label`.execute(a.db)).rows; lap("lemma q " + r5.length);
  chartFromRows("x", "step", r4); lap("chartFromRows baselines");
});
