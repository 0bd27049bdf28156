import { renderToString } from "preact-render-to-string";
import { openDashboardSource } from "./server/dashboard-source.ts";
import { runCharts } from "./data/run-charts.ts";
import { listRuns } from "./data/runs-list.ts";
import { recentPlacements, runEvals } from "./data/run-details.ts";
import { trajectoryPage } from "./data/trajectory-page.ts";
import { toWire } from "./components/wire-json.ts";
import { createApp } from "./server/app.tsx";
import { tableExports } from "./server/table-exports.ts";
let t = performance.now();
const lap = (l: string) => {
  const n = performance.now();
  console.log(l, (n - t).toFixed(0), "ms");
  t = n;
};
await using s = await openDashboardSource("/tmp/prof/events.sqlite");
lap("open");
for (let k = 0; k < 2; k++) {
  await s.read(async (a) => {
    lap("catchup");
    await listRuns(a.db);
    lap("listRuns");
    const c = await runCharts(a.conn, "big");
    lap("runCharts");
    await runEvals(a.db, "big");
    lap("evals");
    await recentPlacements(a.db, "big", 40);
    lap("placements");
    await trajectoryPage(a.db, "big", { step: 9999, page: 0, pageSize: 8 });
    lap("trajectories");
    const w = toWire(c);
    lap("toWire " + w.length);
    JSON.stringify(c);
    lap("plain stringify");
  });
}
await using e = await tableExports(s);
const app = createApp(s, e);
t = performance.now();
const h = await (await app.request("/runs/big")).text();
lap("app.request " + h.length);
const h2 = await (await app.request("/runs/big")).text();
lap("app.request " + h2.length);
