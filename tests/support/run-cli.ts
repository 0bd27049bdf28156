/**
 * Runs one of the repository's CLI scripts as a user would, from the repository root.
 *
 * The read-only tasks over a store (IN_PROCESS) run in the test's own process: their modules
 * export `main`, the same function `deno run` calls, and the test reads what it printed and its
 * exit code. A `deno run` of one of them spent about 0.5 of its 0.7 CPU seconds loading its
 * modules, and the suite ran about 200 of them. The other tasks (training, serving, anything with
 * signals, servers or native state of its own) run as a `deno run` child. Tests of the process
 * itself (exit status, working directory, environment) spawn it themselves (tests/cli, and
 * tests/security's task-run.ts).
 */

const ROOT = new URL("../..", import.meta.url).pathname;

/** What a CLI run printed and how it ended. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Tasks that only read a store or their arguments, with `main(args)` exported. */
const IN_PROCESS = new Set([
  "analysis/cli/export.ts",
  "analysis/cli/report.ts",
  "analysis/cli/runs.ts",
  "analysis/cli/sql.ts",
  "analysis/cli/stats.ts",
  "events/cli/verify.ts",
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

/** The in-process run under way: runs go one at a time, since each takes over the console. */
let running: Promise<unknown> = Promise.resolve();

/**
 * The task's `main` in this process, the console's output collected: console.log and console.info
 * as its stdout, console.error and console.warn as its stderr, each call a line as the console
 * prints it. For any task whose output here is all the test reads (`--help`); its module is
 * loaded into the test's process and stays there. Runs asked for at once go one after another.
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
  const run = running.then(() => withConsoleCollected(script, args));
  running = run.catch(() => {});
  return run;
}

async function withConsoleCollected(script: string, args: string[]): Promise<CliResult> {
  const { main } = await import(new URL(`../../${script}`, import.meta.url).href) as { main: Main };
  const stdout: string[] = [];
  const stderr: string[] = [];
  const line = (sink: string[]) => (...data: unknown[]) => {
    sink.push(data.map((d) => typeof d === "string" ? d : Deno.inspect(d)).join(" ") + "\n");
  };
  const saved = { log: console.log, info: console.info, error: console.error, warn: console.warn };
  Object.assign(console, { log: line(stdout), info: line(stdout) });
  Object.assign(console, { error: line(stderr), warn: line(stderr) });
  try {
    const code = await main(args);
    return { code, stdout: stdout.join(""), stderr: stderr.join("") };
  } finally {
    Object.assign(console, saved);
  }
}
