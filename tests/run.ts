/**
 * `deno task test [PATH...]`: runs the test suite with `deno test` and closes with the line
 * `N passed, N failed` (Deno's own summary is not in that form). Exit status is non-zero on any
 * failure.
 *
 * With no PATH, each folder of tests/ runs in a `deno test` process of its own, so one folder's
 * native state (onnxruntime, DuckDB, pg-boss's pools, Chromium) cannot reach the next, and a
 * process that dies takes only its folder's results with it: the runner names the folder and its
 * exit status, and counts it failed.
 *
 * Before each folder it prints the folder (k of N), the time so far and an estimate of the time
 * left: from the folders' durations in the last full run (kept in .polyrl/test-durations.json),
 * else from the mean of the folders done.
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

const durationsFile = new URL("../.polyrl/test-durations.json", import.meta.url);
const lastDurations: Record<string, number> = await Deno.readTextFile(durationsFile)
  .then((text) => JSON.parse(text))
  .catch(() => ({}));
const durations: Record<string, number> = {};
const started = performance.now();
const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};
const estimateLeft = (k: number): string => {
  const left = groups.slice(k).map((paths) => lastDurations[paths.join(" ")]);
  if (left.every((ms) => ms !== undefined)) {
    return `, about ${clock(left.reduce((a, b) => a + b, 0))} left`;
  }
  if (k === 0) return "";
  return `, about ${clock(((performance.now() - started) / k) * (groups.length - k))} left`;
};

let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;
for (const [k, paths] of groups.entries()) {
  console.error(
    `[${k + 1}/${groups.length}] ${paths.join(" ")} (elapsed ${clock(performance.now() - started)}${
      estimateLeft(k)
    })`,
  );
  const groupStarted = performance.now();
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
  durations[paths.join(" ")] = performance.now() - groupStarted;
}
if (Deno.args.length === 0) {
  await Deno.mkdir(new URL(".", durationsFile), { recursive: true });
  await Deno.writeTextFile(durationsFile, JSON.stringify(durations, null, 2) + "\n");
}
console.error(`elapsed ${clock(performance.now() - started)}`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
Deno.exit(exitCode);
