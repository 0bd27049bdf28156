/**
 * Runs one of the project's CLI scripts (`deno task train`, `deno task replay`) as a child
 * process, so that each run of a study is exactly what a user would run by hand, several can use
 * separate cores, and a crash in one does not take the study down. Its stderr is passed on line by
 * line (progress lines) and its stdout collected (results).
 */

const DENO_JSON = new URL("../deno.json", import.meta.url);

/** What a finished child left behind. */
export interface ChildResult {
  readonly code: number;
  readonly stdout: string;
  /** The last lines of its stderr, for an error message. */
  readonly stderrTail: readonly string[];
}

async function forwardLines(
  stream: ReadableStream<Uint8Array>,
  onLine: (line: string) => void,
): Promise<void> {
  let pending = "";
  const decoder = new TextDecoder();
  for await (const bytes of stream) {
    const lines = (pending + decoder.decode(bytes, { stream: true })).split(/\r?\n|\r/);
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.trim() !== "") onLine(line);
  }
  if (pending.trim() !== "") onLine(pending);
}

/**
 * Runs `script` (a module of this repository) with `args` under `deno run -A`, the project's
 * deno.json and the caller's working directory; `onLine` receives each non-empty stderr line.
 *
 * @example
 * ```ts
 * const r = await runScript(new URL("../engine/cli/train.ts", import.meta.url), ["--preset", "smoke"], {
 *   onLine: (line) => console.error(`[smoke] ${line}`),
 * });
 * r.code; // 0
 * ```
 */
export async function runScript(
  script: URL,
  args: readonly string[],
  options: { readonly onLine?: (line: string) => void } = {},
): Promise<ChildResult> {
  const child = new Deno.Command(Deno.execPath(), {
    // -q keeps deno's own notices (npm bin set-up warnings) out of the forwarded lines.
    args: ["run", "-q", "-A", `--config=${DENO_JSON.pathname}`, script.pathname, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const tail: string[] = [];
  const stderr = forwardLines(child.stderr, (line) => {
    tail.push(line);
    if (tail.length > 20) tail.shift();
    options.onLine?.(line);
  });
  const stdout = new Response(child.stdout).text();
  const [status, out] = await Promise.all([child.status, stdout, stderr]);
  return { code: status.code, stdout: out, stderrTail: tail };
}
