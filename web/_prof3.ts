import { openDashboardSource } from "./server/dashboard-source.ts";
await using s = await openDashboardSource("/tmp/prof/events.sqlite");
await s.read(async (a) => {
  for (let k = 0; k < 2; k++) {
    let t = performance.now();
    const lap = (l: string) => {
      const n = performance.now();
      console.log(l, (n - t).toFixed(0), "ms");
      t = n;
    };
    for (
      const q of [
        `SELECT step::INTEGER AS x, 'reward' AS label, avg(total) AS value, count(*)::INTEGER AS n FROM rewards WHERE run_id = $1 AND phase = 'rollout' AND agent IS NULL GROUP BY step UNION ALL SELECT step::INTEGER, 'accuracy', avg(correct::INT), count(correct)::INTEGER FROM trajectories WHERE run_id = $1 AND phase = 'rollout' GROUP BY step ORDER BY x, label`,
        `SELECT step::INTEGER AS step, wg, grad_norm, agent_grad_norms_json FROM grad_steps WHERE run_id = $1 ORDER BY step, wg, "update"`,
        `SELECT step::INTEGER AS step, prompt::INTEGER AS prompt, agent, mu, sigma FROM baselines WHERE run_id = $1 ORDER BY step, prompt, agent NULLS FIRST`,
      ]
    ) {
      const r = await a.conn.runAndReadAll(q, ["big"]);
      lap("query");
      r.getColumnsJS();
      lap("columns");
    }
  }
});
