/**
 * The real dashboard for attack tests: `deno task web` (web/cli/web.ts) started as a child
 * process on 127.0.0.1 and an ephemeral port, and raw HTTP/1.1 for requests whose Host header
 * `fetch` would not send as given.
 */

const CLI = new URL("../../web/cli/web.ts", import.meta.url).pathname;

/** A running `deno task web`. */
export interface RunningDashboard extends AsyncDisposable {
  /** e.g. http://127.0.0.1:41234 (no trailing slash) */
  readonly url: string;
  readonly port: number;
  /** SIGINT, then the exit status and everything the process wrote to stderr */
  stop(): Promise<{ code: number; stderr: string }>;
}

/**
 * Starts `deno task web --store STORE --port 0 ...args` (with `env` added to this process's
 * environment) and waits for its URL line.
 *
 * @example
 * ```ts
 * import { fillDashboardStore } from "../web/fixtures/dashboard-store.ts";
 * import { startDashboard } from "./web-server.ts";
 *
 * const store = await fillDashboardStore();
 * await using web = await startDashboard(store.path, ["--query-timeout-ms", "1500"]);
 * const res = await fetch(`${web.url}/`);
 * ```
 */
export async function startDashboard(
  store: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
): Promise<RunningDashboard> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--store", store, "--port", "0", ...args],
    env: { ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await lines.read();
    if (done) break;
    out += value;
  }
  const url = out.match(/at (http:\/\/127\.0\.0\.1:\d+)\//)?.[1];
  if (!url) {
    // Killed where it still runs; where it exited at start, kill throws and its stderr says why.
    try {
      child.kill("SIGKILL");
    } catch (err) {
      if (!(err instanceof TypeError)) throw err;
    }
    throw new Error(`deno task web did not start: ${out}${await stderr}`);
  }
  let stopped: Promise<{ code: number; stderr: string }> | null = null;
  const stop = () =>
    stopped ??= (async () => {
      child.kill("SIGINT");
      const { code } = await child.status;
      await lines.cancel().catch(() => {});
      return { code, stderr: await stderr };
    })();
  return {
    url,
    port: Number(new URL(url).port),
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/** A raw response: status line's code, headers (lower-case names) and body text. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Sends one HTTP/1.1 request over TCP exactly as given (`Connection: close` is added) and reads
 * the whole response; `fetch` replaces a Host header with the URL's.
 *
 * @example
 * ```ts
 * import { rawRequest, type RunningDashboard } from "./web-server.ts";
 *
 * declare const web: RunningDashboard;
 * const r = await rawRequest(web.port, "GET / HTTP/1.1", { host: "evil.example" });
 * ```
 */
export async function rawRequest(
  port: number,
  requestLine: string,
  headers: Readonly<Record<string, string>>,
  body = "",
): Promise<RawResponse> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const bytes = new TextEncoder().encode(body);
  const head = Object.entries({ ...headers, "content-length": String(bytes.length) })
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const writer = conn.writable.getWriter();
  await writer.write(
    new TextEncoder().encode(`${requestLine}\r\n${head}connection: close\r\n\r\n`),
  );
  await writer.write(bytes);
  writer.releaseLock();
  const text = await new Response(conn.readable).text();
  const [top, ...rest] = text.split("\r\n\r\n");
  const [status, ...fields] = top.split("\r\n");
  return {
    status: Number(status.split(" ")[1]),
    headers: Object.fromEntries(fields.map((f) => {
      const i = f.indexOf(":");
      return [f.slice(0, i).toLowerCase(), f.slice(i + 1).trim()];
    })),
    body: rest.join("\r\n\r\n"),
  };
}
