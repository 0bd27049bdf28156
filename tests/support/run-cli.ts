/** Runs one of the repository's CLI scripts as a user would, from the repository root. */

const ROOT = new URL("../..", import.meta.url).pathname;

/** What a CLI run printed and how it ended. */
export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * `deno run -A SCRIPT ARGS...` in the repository root, colours off.
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
