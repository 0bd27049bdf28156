/**
 * The dashboard's cache of built island bundles (web/server/island-bundles.ts): its key covers
 * every module the islands are built from, a dashboard started again serves the cached bundles
 * without building, a build replaces other keys and abandoned builds, and a cache that cannot be
 * written is no cache. Through `deno task web` processes, each with its own cache folder.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startDashboard } from "../security/web-server.ts";
import { ISLAND_SOURCE_ROOTS, ISLANDS, islandSourcesKey } from "../../web/server/island-bundles.ts";
import { fillDashboardStore } from "./fixtures/dashboard-store.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every island's script from a running dashboard, as text. */
async function islandScripts(url: string): Promise<string[]> {
  return await Promise.all(ISLANDS.map(async (name) => {
    const res = await fetch(`${url}/islands/${name}.js`);
    const text = await res.text();
    assert.equal(res.status, 200, `${name}: ${text.slice(0, 300)}`);
    return text;
  }));
}

Deno.test("the cache key covers every local module of the islands' graph", async () => {
  for (const name of ISLANDS) {
    const entry = join(ROOT, "web", "islands", `${name}-entry.ts`);
    const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json", entry] })
      .output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const { modules } = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: { specifier: string }[];
    };
    const local = modules.map((m) => m.specifier).filter((s) => s.startsWith("file:"))
      .map((s) => fileURLToPath(s).slice(ROOT.length))
      // npm packages are pinned by deno.lock, which the key hashes
      .filter((path) => !path.startsWith("node_modules/"));
    assert.ok(local.length > 3, `${name}: ${local}`);
    const outside = local.filter((path) => !ISLAND_SOURCE_ROOTS.some((r) => path.startsWith(r)));
    assert.deepEqual(outside, [], `${name} imports these; add their folder to the roots`);
  }
});

Deno.test({
  name: "a dashboard started again serves the cached bundles; a build keeps only its own key",
  sanitizeResources: false,
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    const cache = join(dir, "islands");
    const env = { POLYRL_ISLANDS_CACHE: cache };
    try {
      const key = await islandSourcesKey();
      // A cache of other sources and two build folders: one abandoned, one in progress.
      await Deno.mkdir(join(cache, "0123456789abcdef0123456789abcdef"), { recursive: true });
      await Deno.mkdir(join(cache, ".build-abandoned"));
      await Deno.utime(join(cache, ".build-abandoned"), new Date(0), new Date(0));
      await Deno.mkdir(join(cache, ".build-running"));

      let built: string[];
      {
        await using web = await startDashboard(path, [], env);
        built = await islandScripts(web.url);
      }
      const kept = [...Deno.readDirSync(cache)].map((e) => e.name).sort();
      assert.deepEqual(kept, [".build-running", key]);
      for (const [i, name] of ISLANDS.entries()) {
        assert.equal(await Deno.readTextFile(join(cache, key, `${name}-entry.js`)), built[i]);
      }

      // Served from the cache: a marked copy of a bundle comes back as it is.
      const marked = `/* from the cache */${built[0]}`;
      await Deno.writeTextFile(join(cache, key, `${ISLANDS[0]}-entry.js`), marked);
      {
        await using web = await startDashboard(path, [], env);
        const again = await islandScripts(web.url);
        assert.equal(again[0], marked);
        assert.deepEqual(again.slice(1), built.slice(1));
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "a cache folder that cannot be made: the dashboard builds and serves its bundles",
  sanitizeResources: false,
  fn: async () => {
    const { dir, path } = await fillDashboardStore();
    try {
      // A file where the cache's parent folder would be.
      await Deno.writeTextFile(join(dir, "not-a-folder"), "");
      await using web = await startDashboard(path, [], {
        POLYRL_ISLANDS_CACHE: join(dir, "not-a-folder", "islands"),
      });
      for (const text of await islandScripts(web.url)) assert.ok(text.length > 1000);
      const { stderr } = await web.stop();
      assert.doesNotMatch(stderr, /fail|error/i, stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
