/**
 * Real processes for the rollout-worker tests: `deno task worker` and `deno task train` in
 * subprocesses, against a fresh Postgres schema on POLYRL_TEST_POSTGRES_URL (its queue schema
 * dropped with it).
 */
import { join } from "node:path";
import pg from "pg";
import { mergeConfig, presetInput } from "../../engine/config/mod.ts";
import { MAX_TOKENS } from "../rollout/support.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** Postgres server for tests, when configured. */
export const POSTGRES_URL = Deno.env.get("POLYRL_TEST_POSTGRES_URL");

/** A fresh store schema (and its `_rollouts` queue schema), dropped on dispose. */
export function postgresStore(): { url: string } & AsyncDisposable {
  if (!POSTGRES_URL) throw new Error("POLYRL_TEST_POSTGRES_URL is unset");
  const schema = `polyrl_wk_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("schema", schema);
  return {
    url: url.toString(),
    async [Symbol.asyncDispose]() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.query(`DROP SCHEMA IF EXISTS ${schema}_rollouts CASCADE`);
      await client.end();
    },
  };
}

/** Runs `sql` on the test server (the queue's tables are read as they are, not through code). */
export async function query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as R[];
  } finally {
    await client.end();
  }
}

/** The smoke preset as a config file for `deno task train --config`, with `rollout`. */
export async function smokeConfigFile(
  dir: string,
  rollout: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const path = join(dir, `config-${crypto.randomUUID().slice(0, 8)}.json`);
  const config = mergeConfig(presetInput("smoke"), {
    sampling: { temperature: 1, top_p: 1, max_tokens: MAX_TOKENS },
    runtime: { device: "cpu", threads: 1 },
    rollout,
    ...extra,
  });
  await Deno.writeTextFile(path, JSON.stringify(config));
  return path;
}

/** The smoke preset's config file for a run on workers: the openai backend on `endpoints`. */
export function workersConfigFile(
  tmp: { root: string; adapters: string },
  endpoints: readonly string[],
  rollout: Record<string, unknown> = {},
): Promise<string> {
  return smokeConfigFile(tmp.root, {
    backend: "openai",
    dispatch: "workers",
    endpoints,
    adapter_dir: tmp.adapters,
    ...rollout,
  });
}

/** A child process whose output is collected as it comes. */
export interface Child extends AsyncDisposable {
  readonly pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout has a line matching `pattern` (rejects if the process exits first). */
  waitFor(pattern: RegExp): Promise<string>;
  /** The same for stderr. */
  waitForErr(pattern: RegExp): Promise<string>;
  kill(signal?: Deno.Signal): void;
  readonly status: Promise<Deno.CommandStatus>;
}

/** Starts `deno run -A SCRIPT ARGS...` in the repository root. */
export function spawn(script: string, ...args: string[]): Child {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let out = "";
  let err = "";
  const waiters: (() => void)[] = [];
  const collect = (stream: ReadableStream<Uint8Array<ArrayBuffer>>, add: (s: string) => void) =>
    stream.pipeThrough(new TextDecoderStream()).pipeTo(
      new WritableStream({
        write: (s) => {
          add(s);
          waiters.splice(0).forEach((w) => w());
        },
      }),
    );
  const drained = Promise.all([
    collect(child.stdout, (s) => void (out += s)),
    collect(child.stderr, (s) => void (err += s)),
  ]);
  let exited = false;
  const waitIn = async (text: () => string, pattern: RegExp) => {
    for (;;) {
      const found = text().match(pattern);
      if (found) return found[0];
      if (exited) {
        throw new Error(`${script} exited before printing ${pattern}:\n${out}\n${err}`);
      }
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  const status = child.status.then(async (s) => {
    await drained;
    exited = true;
    waiters.splice(0).forEach((w) => w());
    return s;
  });
  return {
    pid: child.pid,
    stdout: () => out,
    stderr: () => err,
    waitFor: (pattern) => waitIn(() => out, pattern),
    waitForErr: (pattern) => waitIn(() => err, pattern),
    kill(signal = "SIGTERM") {
      if (!exited) child.kill(signal);
    },
    status,
    async [Symbol.asyncDispose]() {
      if (!exited) child.kill("SIGKILL");
      await status;
    },
  };
}

/** `deno task worker --store URL ARGS...`, once it says it is ready. */
export async function startWorker(storeUrl: string, ...args: string[]): Promise<Child> {
  const worker = spawn("engine/cli/worker.ts", "--store", storeUrl, ...args);
  await worker.waitFor(/^worker \S+ ready$/m);
  return worker;
}
