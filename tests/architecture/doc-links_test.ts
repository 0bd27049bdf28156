/**
 * Links between the repository's Markdown files lead somewhere: every relative link of README.md
 * and docs/ names a file or folder of the checkout (a page moved into docs/ takes its links along).
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("../../", import.meta.url).pathname;

/** README.md and every Markdown file under docs/, as paths from the root. */
async function markdownFiles(): Promise<string[]> {
  const out = ["README.md"];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(join(ROOT, dir))) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.name.endsWith(".md")) out.push(path);
    }
  };
  await walk("docs");
  return out.sort();
}

Deno.test("every relative link of README.md and docs/ names a file of the checkout", async () => {
  const broken: string[] = [];
  let links = 0;
  for (const file of await markdownFiles()) {
    const text = await Deno.readTextFile(join(ROOT, file));
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target) || target.startsWith("#")) continue; // a URL or an anchor
      links++;
      const path = join(dirname(join(ROOT, file)), decodeURIComponent(target.split("#")[0]));
      try {
        await Deno.stat(path);
      } catch {
        broken.push(`${file}: ${target} (${relative(ROOT, path)})`);
      }
    }
  }
  assert.ok(links > 20, `only ${links} relative links found: is the pattern still right?`);
  assert.deepEqual(broken, []);
});
