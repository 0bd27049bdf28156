/**
 * `deno task ok`'s check of the documentation's code: `deno check --doc` over every source file
 * of the repository, so that each fenced example in a doc comment type-checks as a module of its
 * own (imports and declared inputs included) and cannot rot as the code changes (issue 35 item 5:
 * every file's examples check; none is left out).
 */

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

const files: string[] = [];
for (const folder of FOLDERS) for await (const path of sources(folder)) files.push(path);
const { code } = await new Deno.Command(Deno.execPath(), {
  args: ["check", "--doc", "--quiet", ...files.sort()],
  cwd: ROOT,
}).spawn().status;
console.error(`deno check --doc: ${files.length} files ${code === 0 ? "pass" : "FAIL"}`);
Deno.exit(code);
