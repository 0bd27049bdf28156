/**
 * `deno task test [PATH...]`: runs the test suite with `deno test` and closes with the line
 * `N passed, N failed` (Deno's own summary is not in that form). Exit status is non-zero on any
 * failure.
 *
 * With no PATH, each folder of tests/ runs in a `deno test` process of its own, so one folder's
 * native state (onnxruntime, DuckDB, pg-boss's pools, Chromium) cannot reach the next, and a
 * process that dies takes only its folder's results with it: the runner names the folder and its
 * exit status, and counts it failed.
 */
import { userPathIfExists } from "../events/cli/user-path.ts";

// A PATH given from a subdirectory means that directory; importing user-path also keeps the
// user's directory from reaching the tests' own task subprocesses.
const groups: string[][] = Deno.args.length > 0
  ? [await Promise.all(Deno.args.map(userPathIfExists))]
  : (await Array.fromAsync(Deno.readDir("tests/")))
    .filter((e) => e.isDirectory)
    .map((e) => [`tests/${e.name}/`])
    .sort((a, b) => a[0].localeCompare(b[0]));

let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;
for (const paths of groups) {
  const junitPath = await Deno.makeTempFile({ prefix: "polyrl-junit-", suffix: ".xml" });
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--permit-no-files", `--junit-path=${junitPath}`, ...paths],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  const xml = await Deno.readTextFile(junitPath).catch(() => "");
  await Deno.remove(junitPath).catch(() => {});
  const root = xml.match(/<testsuites\b[^>]*>/)?.[0] ?? "";
  const attr = (name: string) => Number(root.match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0);
  const groupFailed = attr("failures") + attr("errors");
  const groupSkipped = xml.match(/<skipped\b/g)?.length ?? 0;
  passed += Math.max(0, attr("tests") - groupFailed - groupSkipped);
  skipped += groupSkipped;
  // A run that dies before writing its report (a type error, a crash) has failed even with no
  // counts.
  failed += status.success ? groupFailed : Math.max(groupFailed, 1);
  if (!status.success) {
    exitCode = exitCode || status.code || 1;
    console.error(`deno test ${paths.join(" ")}: exit ${status.code}`);
  }
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
Deno.exit(exitCode);
