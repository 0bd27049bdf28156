/**
 * `deno task ok`'s check of the documentation's code: `deno check --doc` over every source file
 * of the repository, so that each fenced example in a doc comment type-checks as a module of its
 * own (imports and declared inputs included) and cannot rot as the code changes.
 *
 * Files whose examples do not check yet are listed in STILL_FAILING (issue 35 item 5: examples
 * that use names they neither import nor declare). The list only shrinks: fix a file's examples,
 * then remove it here; never add one.
 */

const STILL_FAILING: ReadonlySet<string> = new Set([
  "web/components/chart-grid.tsx",
  "web/components/line-chart.tsx",
  "web/data/compare-data.ts",
  "web/data/live-updates.ts",
  "web/islands/chart-set.tsx",
  "web/islands/run-live.tsx",
  "web/pages/compare-page.tsx",
  "web/pages/run-page.tsx",
  "web/pages/run-sections.tsx",
  "web/server/app.tsx",
]);

const FOLDERS = ["events", "adapters", "engine", "analysis", "web", "study", "tests"];
const ROOT = new URL("..", import.meta.url).pathname;

/** Every .ts and .tsx file under `folder`, as a path from the repository root. */
async function* sources(folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(`${ROOT}${folder}`)) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory) yield* sources(path);
    else if (/\.tsx?$/.test(entry.name)) yield path;
  }
}

const all: string[] = [];
for (const folder of FOLDERS) for await (const path of sources(folder)) all.push(path);
const gone = [...STILL_FAILING].filter((path) => !all.includes(path));
if (gone.length > 0) {
  console.error(`tests/doc-check.ts lists files that do not exist: ${gone.join(", ")}`);
  Deno.exit(1);
}
const files = all.filter((path) => !STILL_FAILING.has(path));
const { code } = await new Deno.Command(Deno.execPath(), {
  args: ["check", "--doc", "--quiet", ...files.sort()],
  cwd: ROOT,
}).spawn().status;
console.error(
  `deno check --doc: ${files.length} files ${code === 0 ? "pass" : "FAIL"}; ` +
    `${STILL_FAILING.size} still failing are left out (tests/doc-check.ts, issue 35)`,
);
Deno.exit(code);
