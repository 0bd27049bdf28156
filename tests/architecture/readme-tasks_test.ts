/**
 * The README's task table is the front door's map: it names every task of deno.json, and nothing
 * else (`runs`, `bench-compare` and `ok` were once missing from it).
 */
import assert from "node:assert/strict";

const ROOT = new URL("../../", import.meta.url);

Deno.test("README's task table lists exactly deno.json's tasks", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT))) as {
    tasks: Record<string, unknown>;
  };
  const readme = await Deno.readTextFile(new URL("README.md", ROOT));
  const listed = [...readme.matchAll(/^\| `deno task ([\w-]+)` +\|/gm)].map((m) => m[1]);
  assert.equal(new Set(listed).size, listed.length, `a task listed twice: ${listed.join(", ")}`);
  assert.deepEqual([...listed].sort(), Object.keys(tasks).sort());
});
