/**
 * A clone has nothing beside it: no file the code or the tests read may lie outside the checkout.
 * Every `new URL("...", import.meta.url)` in the tracked sources must resolve inside the
 * repository, and no tracked file outside docs/ may name a path above the checkout (the
 * development machine's shared folder beside the clone, or its absolute work path).
 */
import assert from "node:assert/strict";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(dirname(new URL(import.meta.url).pathname), "../..");
const tracked = new TextDecoder().decode(
  (await new Deno.Command("git", { args: ["ls-files", "-z"], cwd: root }).output()).stdout,
).split("\0").filter((f) => f !== "");

const isSource = (f: string) => /\.(ts|tsx|js|sh|py|json)$/.test(f) || f === ".ci/run";
const inside = (path: string) => !relative(root, path).startsWith("..");

Deno.test("every import.meta.url-relative path in the sources resolves inside the checkout", async () => {
  const escaping: string[] = [];
  for (const file of tracked.filter((f) => /\.(ts|tsx)$/.test(f))) {
    const text = await Deno.readTextFile(join(root, file));
    for (const m of text.matchAll(/new URL\(\s*["'`]([^"'`$]+)["'`]\s*,\s*import\.meta\.url/g)) {
      const target = resolve(dirname(join(root, file)), m[1]);
      if (!inside(target)) escaping.push(`${file}: ${m[1]}`);
    }
  }
  assert.ok(tracked.length > 100, `git ls-files found ${tracked.length} files`);
  assert.deepEqual(escaping, [], "paths that leave the checkout");
});

Deno.test("no tracked file outside docs/ names a path above the checkout", async () => {
  const naming: string[] = [];
  for (const file of tracked.filter((f) => !f.startsWith("docs/"))) {
    if (!isSource(file) && !file.endsWith(".md")) continue;
    const text = await Deno.readTextFile(join(root, file));
    text.split("\n").forEach((line, i) => {
      if (/\.\.\/shared\b|\/work\//.test(line)) naming.push(`${file}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(naming, []);
});
