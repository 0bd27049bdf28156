/**
 * A task run as a user runs it: `deno task NAME ...args` from a directory of their choice (the
 * task itself runs in the repository root, with INIT_CWD naming that directory, so relative paths
 * mean it), or a script run with `deno run` in a directory (where the default store
 * `.polyrl/events.sqlite` is that directory's).
 */

const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** What a task printed and how it ended. */
export interface TaskResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** This process's environment without INIT_CWD, plus `extra`. */
function environment(extra: Record<string, string>): Record<string, string> {
  const env = Deno.env.toObject();
  delete env.INIT_CWD;
  return { ...env, NO_COLOR: "1", ...extra };
}

async function collect(command: Deno.Command): Promise<TaskResult> {
  const out = await command.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

/**
 * `deno task NAME ...args`, run from `cwd`.
 *
 * @example
 * ```ts
 * import { denoTask } from "./task-run.ts";
 *
 * declare const storeDir: string; // holds events.sqlite
 * const r = await denoTask("sql", ["SELECT 1", "--store", "events.sqlite"], storeDir);
 * ```
 */
export function denoTask(name: string, args: readonly string[], cwd: string): Promise<TaskResult> {
  return collect(
    new Deno.Command(Deno.execPath(), {
      args: ["task", "--config", CONFIG, name, ...args],
      cwd,
      // deno task keeps an INIT_CWD it finds: the user's directory is this one.
      clearEnv: true,
      env: environment({ INIT_CWD: cwd }),
      stdout: "piped",
      stderr: "piped",
    }),
  );
}

/**
 * `deno run -A SCRIPT ...args` (a path from the repository root) in `cwd`, outside `deno task`.
 *
 * @example
 * ```ts
 * import { denoRun } from "./task-run.ts";
 *
 * const dir = await Deno.makeTempDir();
 * const r = await denoRun("engine/cli/docs.ts", ["--out", "x.md"], dir);
 * ```
 */
export function denoRun(script: string, args: readonly string[], cwd: string): Promise<TaskResult> {
  const path = new URL(`../../${script}`, import.meta.url).pathname;
  return collect(
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", CONFIG, path, ...args],
      cwd,
      clearEnv: true,
      env: environment({}),
      stdout: "piped",
      stderr: "piped",
    }),
  );
}
