/**
 * `deno task test [PATH...]`: runs the test suite with `deno test` and closes with the line
 * `N passed, N failed` (Deno's own summary is not in that form). Exit status is non-zero on any
 * failure.
 *
 * The paths are type-checked once, by one `deno check`, and the tests then run with `--no-check`:
 * a `deno test` process checks its whole module graph, and the folders share most of theirs, so
 * checking per folder did the same work 31 times (the folders' start-up, mostly that check, was
 * about 350 of CI's 1,319 seconds; one check of tests/ takes 15 to 20). With no PATH it checks the
 * whole workspace, as `deno task ok` does, so that in CI Deno's check cache answers it. A type
 * error fails the run, and the tests still run.
 *
 * With no PATH, each folder of tests/ runs in a `deno test` process of its own, so one folder's
 * native state (onnxruntime, DuckDB, pg-boss's pools, Chromium) cannot reach the next, and a
 * process that dies takes only its folder's results with it: the runner names the folder and its
 * exit status, and counts it failed.
 *
 * Up to POLYRL_TEST_JOBS folders (default 2) run at once, longest first by the last full run's CPU
 * times (kept in .polyrl/test-cpu.json; in a fresh clone, tests/folder-cpu.json, a CI run's copy of
 * that file; else by the size of their test files), because a folder spends part of its time
 * waiting on the processes it starts (a CLI's module load, a dashboard, Chromium, a training run)
 * while the other core could work. The folders in ALONE never run beside each other or beside a
 * heavy folder: their tests start processes that together keep a core or more busy while timers run
 * (workers: a trainer, two workers and their servers, one killed mid-step; device: h200.sh's
 * stages, each under a time limit; onnx-runtime: the software Vulkan adapter's threads). They run
 * one after another first, and beside them the other slots take the lightest folders (unit tests of
 * one process each); then every slot takes the rest, longest first. The other folders' timed
 * assertions leave several times the time they measure. No two folders share a fixed port or path:
 * the tests use temporary directories, port 0 and a fresh Postgres schema each. The tests within a
 * folder run one at a time (no `--parallel`): many time a step or kill a process they started.
 *
 * A folder's test modules run as one: the runner writes a module that imports them all (under
 * .test-entries/, removed at the end) and gives `deno test` that, which would otherwise load the
 * modules they share once per test module (see `entryModule`).
 *
 * Fixtures that several test files share (suite-fixture.ts) are made once per run in a folder
 * named to the tests in $POLYRL_TEST_FIXTURES and removed at the end.
 *
 * A folder's output is printed whole when it finishes (streamed as it runs when one folder runs at
 * a time), then a line with its time, its CPU time (user + system of its processes, on Linux)
 * and counts. Before each folder starts, the runner prints the folder (k of N), the time so far
 * and an estimate of the time left.
 */
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { userPathIfExists } from "../events/cli/user-path.ts";
import { SUITE_FIXTURES_VAR } from "./support/suite-fixture.ts";

/** Folders that must not run beside another (see the doc comment above). */
const ALONE = new Set(["tests/workers/", "tests/device/", "tests/onnx-runtime/"]);

/**
 * A test module's name, as `deno test` finds them in a folder:
 * {*_,*.,}test.{ts,tsx,mts,js,mjs,jsx}.
 */
const TEST_MODULE = /^(.*[_.])?test\.(ts|tsx|mts|js|mjs|jsx)$/;

const jobs = Math.max(1, Number(Deno.env.get("POLYRL_TEST_JOBS") ?? 2) || 1);

/** Each folder's CPU seconds in this clone's last full run (written at the end of one). */
const localCostsFile = new URL("../.polyrl/test-cpu.json", import.meta.url);
/** The same from a CI run, committed, for a fresh clone (refresh it from a CI run's local file). */
const committedCostsFile = new URL("./folder-cpu.json", import.meta.url);
const readCosts = (file: URL): Promise<Record<string, number> | undefined> =>
  Deno.readTextFile(file).then((text) => JSON.parse(text), () => undefined);
const lastCosts: Record<string, number> = await readCosts(localCostsFile) ??
  await readCosts(committedCostsFile) ?? {};

// A PATH given from a subdirectory means that directory; importing user-path also keeps the
// user's directory from reaching the tests' own task subprocesses.
const groups: string[][] = Deno.args.length > 0
  ? [await Promise.all(Deno.args.map(userPathIfExists))]
  : (await Array.fromAsync(Deno.readDir("tests/")))
    .filter((e) => e.isDirectory)
    .map((e) => [`tests/${e.name}/`]);
const key = (paths: string[]) => paths.join(" ");
const isAlone = (paths: string[]) => ALONE.has(key(paths));
const knownCosts = groups.every((paths) => lastCosts[key(paths)] !== undefined);
/** How long a folder is expected to take: its last CPU time, else its test files' size. */
const expectedLength = knownCosts
  ? new Map(groups.map((paths) => [key(paths), lastCosts[key(paths)]]))
  : new Map(
    await Promise.all(groups.map(async (paths) => [key(paths), await testBytes(paths)] as const)),
  );
// Longest first, so that the last to finish are short.
groups.sort((a, b) =>
  expectedLength.get(key(b))! - expectedLength.get(key(a))! || key(a).localeCompare(key(b))
);
const aloneGroups = groups.filter(isAlone);
/** The other folders, longest first: taken from the front, or from the back beside ALONE's. */
const sharedGroups = groups.filter((paths) => !isAlone(paths));

/** The size of the test files under `paths`, which roughly follows their run time. */
async function testBytes(paths: string[]): Promise<number> {
  const sizes = await Promise.all(
    (await testFiles(paths)).map(async (f) => (await Deno.stat(f)).size),
  );
  return sizes.reduce((a, b) => a + b, 0);
}

/**
 * The test modules `deno test PATHS` runs: a file as given, a folder's test modules at any depth;
 * a missing path gives none (deno test names it).
 */
async function testFiles(paths: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for await (const e of Deno.readDir(dir)) {
      const path = join(dir, e.name);
      if (e.isDirectory) await walk(path);
      else if (e.isFile && TEST_MODULE.test(e.name)) found.push(path);
    }
  };
  for (const path of paths) {
    const info = await Deno.stat(path).catch(() => undefined);
    if (info?.isFile) found.push(path);
    else if (info?.isDirectory) await walk(path);
  }
  return found.sort();
}

/** This run's entry modules, in the checkout (so that its deno.json resolves their imports). */
const entriesDir = fileURLToPath(new URL(`../.test-entries/${Deno.pid}/`, import.meta.url));

/**
 * One module importing every test module under `paths`, which `deno test` then runs as one:
 * it gives each module it is given an isolate of its own, which loads the shared graph
 * (onnxruntime, DuckDB, the engine) again, about half the CPU time of a folder of unit tests
 * (tests/model, onnx, config and hf: 44 CPU seconds as 46 modules, 23 as one). The tests still
 * name their own files where they fail. The paths themselves when they hold no test module.
 */
async function entryModule(paths: string[]): Promise<string[]> {
  const files = await testFiles(paths);
  if (files.length === 0) return paths;
  await Deno.mkdir(entriesDir, { recursive: true });
  const entry = join(entriesDir, `${key(paths).replaceAll(/[^A-Za-z0-9]+/g, "-")}_test.ts`);
  const imports = files.map((f) => `import ${JSON.stringify(pathToFileURL(resolve(f)).href)};\n`);
  await Deno.writeTextFile(entry, imports.join(""));
  return [entry];
}

/** The CPU seconds of each folder run so far (undefined where there is no /proc). */
const costs: Record<string, number | undefined> = {};
const fixtures = await Deno.makeTempDir({ prefix: "polyrl-suite-fixtures-" });
const started = performance.now();
const clock = (ms: number) => {
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
};
/**
 * The time left for the folders not started yet: from the last run's CPU times (the suite keeps
 * its cores busy, so CPU time over the slots is about wall time), else the mean so far.
 */
const estimateLeft = (): string => {
  const left = [...aloneGroups, ...sharedGroups];
  if (knownCosts) {
    const cost = (paths: string[]) => lastCosts[key(paths)];
    const alone = left.filter(isAlone).reduce((sum, paths) => sum + cost(paths), 0);
    const shared = left.filter((paths) => !isAlone(paths)).reduce((s, paths) => s + cost(paths), 0);
    return `, about ${clock(1000 * Math.max(alone, (alone + shared) / jobs))} left`;
  }
  const done = Object.keys(costs).length;
  if (done === 0) return "";
  return `, about ${clock(((performance.now() - started) / done) * (groups.length - done))} left`;
};

let passed = 0;
let failed = 0;
let skipped = 0;
let exitCode = 0;
const fail = (what: string, code: number) => {
  exitCode = exitCode || code || 1;
  console.error(`${what}: exit ${code}`);
};

/**
 * CPU seconds (user + system) of this process's children reaped so far, including their own
 * reaped children (Linux's cutime and cstime in /proc/self/stat, in USER_HZ = 100 ticks);
 * undefined where there is no /proc. CPU time, unlike a folder's wall time, hardly moves with
 * what runs beside it, so it says which folders cost the most.
 */
async function childCpuSeconds(): Promise<number | undefined> {
  const stat = await Deno.readTextFile("/proc/self/stat").catch(() => undefined);
  if (stat === undefined) return undefined;
  // The fields after the command name in parentheses; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

/**
 * The CPU seconds since the last call: called as each child is reaped, they are that child's
 * (folders run at once, so two reaps a moment apart could swap theirs; the sum stays exact).
 */
let cpuSeen = await childCpuSeconds();
async function cpuSinceLast(): Promise<number | undefined> {
  const now = await childCpuSeconds();
  const spent = now === undefined || cpuSeen === undefined ? undefined : now - cpuSeen;
  cpuSeen = now;
  return spent;
}
const cpuClock = (seconds: number | undefined) =>
  seconds === undefined ? "" : `, CPU ${clock(seconds * 1000)}`;

// With no PATH, the whole workspace, as `deno task ok` checks it: .ci/run runs that first, and
// Deno's check cache then answers this one in about 4 seconds where tests/ alone took 13 (another
// set of roots is another graph to Deno's cache); by itself it takes 17 instead of 13.
const checkPaths = Deno.args.length > 0 ? groups.flat() : [];
const check = await new Deno.Command(Deno.execPath(), {
  args: ["check", ...checkPaths],
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
console.error(`deno check${cpuClock(await cpuSinceLast())}`);
if (!check.success) {
  failed += 1;
  fail(`deno check ${key(checkPaths) || "(the workspace)"}`, check.code);
}

/** Runs one folder's `deno test`, then prints its output (when buffered), time and counts. */
let startedGroups = 0;
async function runGroup(paths: string[], buffered: boolean): Promise<void> {
  startedGroups += 1;
  console.error(
    `[${startedGroups}/${groups.length}] ${key(paths)} (elapsed ${
      clock(performance.now() - started)
    }${estimateLeft()})`,
  );
  const groupStarted = performance.now();
  const junitPath = await Deno.makeTempFile({ prefix: "polyrl-junit-", suffix: ".xml" });
  const output = buffered ? "piped" : "inherit";
  const run = await new Deno.Command(Deno.execPath(), {
    args: [
      ...["test", "-A", "--no-check", "--permit-no-files", `--junit-path=${junitPath}`],
      ...await entryModule(paths),
    ],
    stdout: output,
    stderr: output,
    env: { [SUITE_FIXTURES_VAR]: fixtures },
  }).output();
  const cpu = await cpuSinceLast();
  if (buffered) {
    await Deno.stdout.write(run.stdout);
    await Deno.stderr.write(run.stderr);
  }
  const xml = await Deno.readTextFile(junitPath).catch(() => "");
  await Deno.remove(junitPath).catch(() => {});
  const root = xml.match(/<testsuites\b[^>]*>/)?.[0] ?? "";
  const attr = (name: string) => Number(root.match(new RegExp(`\\b${name}="(\\d+)"`))?.[1] ?? 0);
  const failures = attr("failures") + attr("errors");
  const groupSkipped = xml.match(/<skipped\b/g)?.length ?? 0;
  const groupPassed = Math.max(0, attr("tests") - failures - groupSkipped);
  // A run that dies before writing its report (a crash) has failed even with no counts.
  const groupFailed = run.success ? failures : Math.max(failures, 1);
  passed += groupPassed;
  failed += groupFailed;
  skipped += groupSkipped;
  if (!run.success) fail(`deno test ${key(paths)}`, run.code);
  costs[key(paths)] = cpu;
  console.error(
    `${key(paths)}: ${clock(performance.now() - groupStarted)}${
      cpuClock(cpu)
    }, ${groupPassed} passed, ` +
      `${groupFailed} failed`,
  );
}

const slots = Math.min(jobs, groups.length);
const buffered = slots > 1;
/** Runs the folders left in `from`, longest first, until none is left. */
async function drain(from: string[][]): Promise<void> {
  for (let paths; (paths = from.shift()) !== undefined;) await runGroup(paths, buffered);
}
// The ALONE folders in one slot, the lightest folders beside them; then everything else.
let aloneDone = false;
await Promise.all(Array.from({ length: slots }, async (_, slot) => {
  if (slot === 0) {
    await drain(aloneGroups);
    aloneDone = true;
  } else {
    while (!aloneDone && sharedGroups.length > 0) {
      await runGroup(sharedGroups.pop()!, buffered);
    }
  }
  await drain(sharedGroups);
}));
await Deno.remove(fixtures, { recursive: true });
await Deno.remove(entriesDir, { recursive: true }).catch(() => {});
await Deno.remove(join(entriesDir, "..")).catch(() => {}); // unless another run's are there

if (Deno.args.length === 0) {
  await Deno.mkdir(new URL(".", localCostsFile), { recursive: true });
  const rounded = Object.fromEntries(
    Object.entries(costs).sort().map(([folder, cpu]) => [folder, Math.round(cpu ?? 0)]),
  );
  await Deno.writeTextFile(localCostsFile, JSON.stringify(rounded, null, 2) + "\n");
}
const totalCpu = await childCpuSeconds();
console.error(`elapsed ${clock(performance.now() - started)}${cpuClock(totalCpu)}`);
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
Deno.exit(exitCode);
