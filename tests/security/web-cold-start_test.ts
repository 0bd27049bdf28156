/**
 * The real dashboard (`deno task web`) started where esbuild is not installed yet (a DENO_DIR
 * without it, esbuild from a local registry: see esbuild-registry.ts): it stays up, and serves
 * every island's bundle; where esbuild cannot be had at all it still serves its pages, says
 * their interactive parts are unavailable and why, and builds the bundles once it can.
 */
import assert from "node:assert/strict";
import { fillDashboardStore } from "../web/fixtures/dashboard-store.ts";
import { esbuildRegistry } from "./esbuild-registry.ts";
import { type RunningDashboard, startDashboard } from "./web-server.ts";
import { ISLANDS } from "../../web/server/island-bundles.ts";

/** Cold starts in a row: with one bundler per island, 7 of 8 such starts ended at once. */
const COLD_STARTS = 3;

/** Every island's script, all requested at once, as the first pages' scripts would be. */
function fetchIslands(web: RunningDashboard): Promise<Response[]> {
  return Promise.all(ISLANDS.map((name) => fetch(`${web.url}/islands/${name}.js`)));
}

Deno.test({
  name: "cold starts: the dashboard stays up and serves every island's bundle",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    // The registry answers the tarball requests of four bundlers together, as a slow network
    // does: today's one bundler per process asks once and waits out the hold.
    await using registry = await esbuildRegistry({ together: ISLANDS.length });
    try {
      for (let start = 1; start <= COLD_STARTS; start++) {
        const web = await startDashboard(path, [], await registry.coldEnv());
        try {
          for (const [i, res] of (await fetchIslands(web)).entries()) {
            const text = await res.text();
            assert.equal(res.status, 200, `start ${start}, ${ISLANDS[i]}: ${text.slice(0, 400)}`);
            assert.equal(res.headers.get("content-type"), "text/javascript");
            assert.ok(text.length > 1000, `start ${start}, ${ISLANDS[i]}: a bundle`);
          }
          const home = await fetch(`${web.url}/`);
          assert.equal(home.status, 200);
          assert.match(await home.text(), /<script type="module" src="\/islands\/runs-table\.js">/);
        } finally {
          const { stderr } = await web.stop();
          assert.doesNotMatch(stderr, /failed|error/i, `start ${start}: ${stderr}`);
        }
      }
      // Each start installed esbuild from the registry: the starts were cold.
      assert.ok(registry.downloads >= COLD_STARTS, `downloads: ${registry.downloads}`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "no esbuild to be had: pages render, say why islands are unavailable, and recover",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    await using registry = await esbuildRegistry();
    registry.available = false;
    try {
      await using web = await startDashboard(path, [], await registry.coldEnv());
      for (const res of await fetchIslands(web)) {
        assert.equal(res.status, 503);
        assert.match(await res.text(), /deno bundle of the islands .* failed: .*esbuild/s);
      }
      const down = await fetch(`${web.url}/`);
      assert.equal(down.status, 200);
      const page = await down.text();
      // The runs table, rendered on the server, and the reason in place of its script.
      assert.match(page, /grpo-s1/);
      assert.match(page, /data-island-unavailable="runs-table"/);
      assert.match(page, /interactive part of this view is unavailable/);
      assert.doesNotMatch(page, /src="\/islands\//);
      // That page started another build: it fails too, and the script waits for it.
      assert.equal((await fetch(`${web.url}/islands/runs-table.js`)).status, 503);

      registry.available = true;
      for (const res of await fetchIslands(web)) {
        assert.equal(res.status, 200, await res.clone().text());
        assert.ok((await res.text()).length > 1000);
      }
      const up = await (await fetch(`${web.url}/`)).text();
      assert.match(up, /<script type="module" src="\/islands\/runs-table\.js">/);
      assert.doesNotMatch(up, /unavailable/);
      const { stderr } = await web.stop();
      assert.match(stderr, /deno bundle of the islands .* failed/s, "the failure is logged");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
