/**
 * Runs one of the repository's CLI scripts as a user would, from the repository root.
 *
 * The tasks of IN_PROCESS run in the test's own process: their modules export `main`, the same
 * function `deno run` calls, and the test reads what it printed (console and Deno.stdout/stderr
 * writes, collected) and its exit code. A `deno run` spent about 0.5 of a query's 0.7 CPU seconds,
 * and 0.65 of a smoke training run's 3 or so, loading modules; the suite runs about 200 queries,
 * 90 training and evaluation runs and 29 replays. The other tasks run as a `deno run` child:
 * servers; pretrain, which sets the process's malloc thresholds for one shape; anything a test
 * signals. A process imports a module once, so a test that edits a custom workflow module after
 * its run and replays it runs that replay as a child (`runChild`), to import the module afresh
 * (tests/workflows' custom-workflow_test). Tests of the process itself (exit status, working
 * directory, environment, signals) spawn it themselves (tests/cli/usage-errors, tests/security's
 * task-run.ts and store-helpers.ts).
 */

const ROOT = new URL("../..", import.meta.url).pathname;

/** What a CLI run printed and how it ended. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Tasks that print only through the console and Deno.stdout/stderr and leave nothing behind when
 * `main` returns (no server, no listener: train removes its Ctrl-C listener). A module they import
 * (a custom workflow's) stays as this process first imported it.
 */
const IN_PROCESS = new Set([
  "analysis/cli/export.ts",
  "analysis/cli/report.ts",
  "analysis/cli/runs.ts",
  "analysis/cli/sql.ts",
  "analysis/cli/stats.ts",
  "engine/cli/docs.ts",
  "engine/cli/eval.ts",
  "engine/cli/export-model.ts",
  "engine/cli/grade.ts",
  "engine/cli/replay.ts",
  "engine/cli/train.ts",
  "events/cli/verify.ts",
  "study/cli/study.ts",
]);

/**
 * `deno run -A SCRIPT ARGS...` in the repository root, colours off; a task of IN_PROCESS in this
 * process when its working directory is the repository root.
 *
 * @example
 * ```ts
 * import { runCli } from "./run-cli.ts";
 *
 * const r = await runCli("engine/cli/replay.ts", "latest");
 * r.code; // 0 when the latest run of the default store replays bit-identically
 * ```
 */
export async function runCli(script: string, ...args: string[]): Promise<CliResult> {
  if (IN_PROCESS.has(script) && `${Deno.cwd()}/` === ROOT) {
    return await runInProcess(script, ...args);
  }
  return await runChild(script, ...args);
}

/**
 * `deno run -A SCRIPT ARGS...` in the repository root, colours off, always as a child process:
 * for a run that must import its modules afresh.
 *
 * @example
 * ```ts
 * import { runChild } from "./run-cli.ts";
 *
 * const r = await runChild("engine/cli/replay.ts", "latest");
 * r.code; // 0 when the latest run of the default store replays bit-identically
 * ```
 */
export async function runChild(script: string, ...args: string[]): Promise<CliResult> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

type Main = (args: string[]) => Promise<number>;

/** The in-process run under way: runs go one at a time, since each takes over the output. */
let running: Promise<unknown> = Promise.resolve();

/**
 * The task's `main` in this process, its output collected: console.log, console.info and
 * Deno.stdout writes as its stdout, console.error, console.warn and Deno.stderr writes as its
 * stderr (a console call a line as the console prints it). runCli takes it for the tasks of
 * IN_PROCESS; help_test for every task's `--help`, whose output is all it reads. The task's module
 * is loaded into the test's process and stays there. Runs asked for at once go one after another.
 *
 * @example
 * ```ts
 * import { runInProcess } from "./run-cli.ts";
 *
 * const help = await runInProcess("engine/cli/train.ts", "--help");
 * help.code; // 0
 * ```
 */
export function runInProcess(script: string, ...args: string[]): Promise<CliResult> {
  const run = running.then(() => withOutputCollected(script, args));
  running = run.catch(() => {});
  return run;
}

async function withOutputCollected(script: string, args: string[]): Promise<CliResult> {
  const { main } = await import(new URL(`../../${script}`, import.meta.url).href) as { main: Main };
  const stdout: string[] = [];
  const stderr: string[] = [];
  const line = (sink: string[]) => (...data: unknown[]) => {
    sink.push(data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ") + "\n");
  };
  const decoder = new TextDecoder();
  const write = (sink: string[]) => (bytes: Uint8Array) => {
    sink.push(decoder.decode(bytes));
    return bytes.length;
  };
  const saved = { log: console.log, info: console.info, error: console.error, warn: console.warn };
  const savedWrites = [Deno.stdout.writeSync, Deno.stderr.writeSync] as const;
  Object.assign(console, { log: line(stdout), info: line(stdout) });
  Object.assign(console, { error: line(stderr), warn: line(stderr) });
  Deno.stdout.writeSync = write(stdout);
  Deno.stderr.writeSync = write(stderr);
  try {
    const code = await main(args);
    return { code, stdout: stdout.join(""), stderr: stderr.join("") };
  } finally {
    Object.assign(console, saved);
    [Deno.stdout.writeSync, Deno.stderr.writeSync] = savedWrites;
  }
}
