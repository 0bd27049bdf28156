/**
 * The Compare page over a store with every kind of run (tests/web/fixtures/mixed-store.ts):
 * by default the completed training runs, filters from the URL (a SQL predicate, status, kind,
 * name) checked as `deno task report` checks them, and errors shown on the page, never a 500.
 */
import assert from "node:assert/strict";
import { dashboardAppOver } from "./fixtures/dashboard-store.ts";
import { fillMixedStore, MIXED_RUNS } from "./fixtures/mixed-store.ts";

Deno.test({
  name: "compare page: default selection, URL filters and hostile predicates on a mixed store",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const { path } = await fillMixedStore();
    await using d = await dashboardAppOver(path);
    const get = async (query: string) => {
      const res = await d.app.request(`/compare${query}`);
      return { status: res.status, body: await res.text() };
    };
    // The runs the page compares, as its groups table links them.
    const runsIn = (body: string) =>
      [...body.matchAll(/<a class="run" href="\/runs\/([^"]+)">/g)].map((m) => m[1]).sort();

    // Default: the completed training runs, never the eval, failed, running or first-step runs.
    const home = await get("");
    assert.equal(home.status, 200, home.body.slice(0, 1500));
    assert.match(home.body, /runs selected: status completed, kind training, not hidden\./);
    assert.deepEqual(runsIn(home.body), [MIXED_RUNS.completed, MIXED_RUNS.resumed].sort());
    // One estimator among them: the comparison table says why it is empty.
    assert.match(home.body, /class="notice empty-reason">only estimator=[\w-]+ is selected/);
    assert.doesNotMatch(home.body, /<table class="vs-baseline">/);

    assert.deepEqual(runsIn((await get("?kind=eval")).body), [MIXED_RUNS.eval]);
    assert.deepEqual(runsIn((await get("?status=failed&kind=all")).body), [MIXED_RUNS.failed]);
    const glob = await get(`?name=${encodeURIComponent("mixed-c*")}`);
    assert.deepEqual(runsIn(glob.body), [MIXED_RUNS.completed]);
    const where = await get(`?where=${encodeURIComponent("run_id LIKE '%resumed'")}`);
    assert.deepEqual(runsIn(where.body), [MIXED_RUNS.resumed]);

    // Every run: other benchmarks and k are separate columns, runs never evaluated are named.
    const all = await get("?status=all&kind=all");
    assert.equal(all.status, 200, all.body.slice(0, 1500));
    assert.deepEqual(runsIn(all.body), Object.values(MIXED_RUNS).sort());
    assert.match(all.body, /<th>sums avg@2<\/th>/);
    assert.match(all.body, /<th>validation avg@2<\/th>/);
    assert.match(all.body, /Runs without an evaluation: [^<]*mixed-first-step/);
    assert.match(all.body, /no average column/);

    for (
      const [query, why] of [
        [`where=${encodeURIComponent("1=1) union select 'x' --")}`, /where &quot;1=1\)/],
        [`where=${encodeURIComponent("1=1) UNION SELECT run_id FROM runs WHERE (1=1")}`, /outside/],
        [`where=${encodeURIComponent("false) OR (true")}`, /outside its parentheses/],
        [`where=${encodeURIComponent("true; drop table runs")}`, /Parser Error|one statement/],
        [`where=${encodeURIComponent("no_such_column > 1")}`, /no_such_column/],
        [
          "where=false",
          /no run matches status completed, kind training, not hidden, where false; the store/,
        ],
        ["status=complete", /status &quot;complete&quot;: expected all or a comma-separated/],
        ["kind=bogus", /kind &quot;bogus&quot;: expected training, eval or all/],
        ["runs=nope", /no run nope/],
      ] as const
    ) {
      const r = await get(`?${query}`);
      assert.equal(r.status, 400, query);
      assert.match(r.body, /<pre class="error">/, query);
      assert.match(r.body, why, query);
      // The form keeps what was typed, to fix it.
      assert.match(r.body, /<form class="toolbar" method="get" action="\/compare">/);
    }
    // Nothing was dropped or written by the hostile predicates.
    assert.deepEqual(runsIn((await get("?status=all&kind=all")).body), runsIn(all.body));
  },
});
