/**
 * The real `deno task serve` process on 127.0.0.1 with a free port, as the tests talk to it: the
 * CLI in a subprocess, its URL read from the line it prints once it listens.
 */
const ROOT = new URL("../..", import.meta.url).pathname;

/** A running server process. */
export interface ServerProcess {
  readonly url: string;
  /** POSTs `body` as JSON (or as given when a string) and returns the response. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
  /** POSTs and parses a JSON answer, asserting nothing. */
  // deno-lint-ignore no-explicit-any
  json(path: string, body: unknown): Promise<{ status: number; body: Record<string, any> }>;
  get(path: string): Promise<Response>;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then waits for it to exit; returns its exit code. */
  stop(): Promise<number>;
}

/**
 * Starts `deno run -A engine/cli/serve.ts --port 0 ...args`.
 *
 * @example
 * ```ts
 * import { startServe } from "./server-process.ts";
 *
 * await using server = await startServe("--model", "embedded");
 * const health = await server.get("/health"); // 200, stopped when `server` goes out of scope
 * ```
 */
export async function startServe(...args: string[]): Promise<ServerProcess & AsyncDisposable> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "engine/cli/serve.ts", "--port", "0", ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let err = "";
  const errDone = child.stderr.pipeThrough(new TextDecoderStream()).pipeTo(
    new WritableStream({ write: (s) => void (err += s) }),
  );
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let url: string | null = null;
  let out = "";
  while (url === null) {
    const { done, value } = await reader.read();
    if (done) break;
    out += value;
    url = out.match(/^serving .* at (http:\/\/\S+)$/m)?.[1] ?? null;
  }
  // Drain the rest of stdout so the child never blocks on a full pipe.
  const outDone = (async () => {
    while (!(await reader.read()).done);
  })();
  if (url === null) {
    const status = await child.status;
    await errDone;
    throw new Error(`serve exited ${status.code} before listening:\n${err}`);
  }
  const base = url;
  let stopped: Promise<number> | null = null;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const status = await child.status;
      await Promise.all([errDone, outDone]);
      return status.code;
    })();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(base + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  return {
    url: base,
    post,
    json: async (path, body) => {
      const res = await post(path, body);
      return { status: res.status, body: await res.json() };
    },
    get: (path) => fetch(base + path),
    stderr: () => err,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/**
 * The data lines of a server-sent-events body, each event checked to be exactly one `data:` line
 * followed by a blank line.
 *
 * @example
 * ```ts
 * import { sseEvents } from "./server-process.ts";
 *
 * sseEvents('data: {"choices":[]}\n\ndata: [DONE]\n\n'); // ['{"choices":[]}', "[DONE]"]
 * ```
 */
export function sseEvents(text: string): string[] {
  if (!text.endsWith("\n\n")) {
    throw new Error(`an SSE body ends with a blank line: ${text.slice(-40)}`);
  }
  return text.slice(0, -2).split("\n\n").map((event) => {
    if (!event.startsWith("data: ") || event.includes("\n")) {
      throw new Error(`not one data line: ${JSON.stringify(event)}`);
    }
    return event.slice("data: ".length);
  });
}
