/**
 * Runs of the smoke preset for the rollout-backend tests: in-process (local backend) or against
 * `deno task serve` processes (openai backend), each into its own SQLite store.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import {
  mergeConfig,
  type NormalizedConfig,
  parseConfig,
  presetInput,
} from "../../engine/config/mod.ts";
import type { EmbeddedVersion } from "../../adapters/model/mod.ts";
import { resumeTraining } from "../../engine/trainer/resume-run.ts";
import { runTraining, type TrainProgress } from "../../engine/trainer/train-loop.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";

/** Tokens per turn: long enough that some turns end early. */
export const MAX_TOKENS = 48;

/** The smoke preset, one or two steps, with `rollout` when given. */
export function smokeConfig(
  storePath: string,
  rollout?: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): NormalizedConfig {
  return parseConfig(mergeConfig(presetInput("smoke"), {
    sampling: { temperature: 1, top_p: 1, max_tokens: MAX_TOKENS },
    runtime: { device: "cpu", threads: 1 },
    store: storePath,
    ...(rollout ? { rollout } : {}),
    ...extra,
  }));
}

/**
 * Runs `config` under run id `runId` into its store (or resumes the run there); every event, and
 * the error if it failed.
 */
export async function runInto(
  config: NormalizedConfig,
  runId: string,
  options: {
    resume?: boolean;
    onProgress?: (p: TrainProgress) => void;
    /** The weights `"embedded"` stands for (TrainOptions.embedded). */
    embedded?: EmbeddedVersion;
  } = {},
): Promise<{ events: StoredEvent<NewEvent>[]; error: Error | null }> {
  await using store = await openStore(config.store);
  const runtime = await openRuntime("cpu", { threads: 1 });
  let error: Error | null = null;
  try {
    const { onProgress, embedded } = options;
    if (options.resume) await resumeTraining(store, runId, { runtime, onProgress });
    else await runTraining(config, { store, runtime, runId, onProgress, embedded });
  } catch (err) {
    error = err as Error;
  } finally {
    await runtime.close();
  }
  const events: StoredEvent<NewEvent>[] = [];
  for await (const e of store.readStream(runId)) events.push(e as StoredEvent<NewEvent>);
  return { events, error };
}

/**
 * The `turn.generated` data of a served run against a local run's: every field but the logprobs
 * equal, turn by turn (assert.deepEqual); returns the served turns and the largest logprob gap.
 */
export function compareTurns(
  local: readonly StoredEvent<NewEvent>[],
  served: readonly StoredEvent<NewEvent>[],
): { servedTurns: TurnData[]; largest: number } {
  const turns = (events: readonly StoredEvent<NewEvent>[]) =>
    events.flatMap((e) => e.type === "turn.generated" ? [e.data] : []);
  const localTurns = turns(local);
  const servedTurns = turns(served);
  assert.equal(servedTurns.length, localTurns.length);
  let largest = 0;
  for (const [i, t] of servedTurns.entries()) {
    const { logprobs, ...rest } = t;
    const { logprobs: localLogprobs, ...localRest } = localTurns[i];
    assert.deepEqual(rest, localRest, `turn ${i}`);
    for (let j = 0; j < logprobs.length; j++) {
      largest = Math.max(largest, Math.abs(logprobs[j] - localLogprobs[j]));
    }
  }
  return { servedTurns, largest };
}

type TurnData = Extract<NewEvent, { type: "turn.generated" }>["data"];

/** A temporary folder with `adapters/` inside, removed at the end. */
export async function tempFolder(): Promise<{ root: string; adapters: string } & AsyncDisposable> {
  const root = await Deno.makeTempDir({ prefix: "polyrl-rollout-" });
  const adapters = join(root, "adapters");
  await Deno.mkdir(adapters);
  return {
    root,
    adapters,
    [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }),
  };
}

/** A proxy in front of a real server, counting and optionally rewriting its completions. */
export interface CompletionProxy extends AsyncDisposable {
  readonly url: string;
  /** `/v1/completions` requests passed on so far. */
  readonly completions: number;
  /** The most `/v1/completions` requests that were in flight at once. */
  readonly peak: number;
  /** Requests passed on so far, by method and path ("POST /generate"). */
  readonly routes: ReadonlyMap<string, number>;
}

/**
 * Starts a proxy on 127.0.0.1 in front of `target` that passes every request on and lets
 * `rewrite` change each `/v1/completions` choice before it goes back (a server with other
 * numerics or other tokens than `deno task serve`).
 *
 * @example
 * ```ts
 * import { startServe } from "../serve/server-process.ts";
 * import { completionProxy } from "./support.ts";
 *
 * await using server = await startServe("--model", "embedded");
 * await using proxy = completionProxy(server.url, (choice) => choice.token_ids.reverse());
 * // a run whose rollout.endpoints is [proxy.url] gets each choice's tokens reversed
 * ```
 */
export function completionProxy(
  target: string,
  // deno-lint-ignore no-explicit-any
  rewrite: (choice: any) => void = () => {},
): CompletionProxy {
  let completions = 0;
  let inFlight = 0;
  let peak = 0;
  const routes = new Map<string, number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = new URL(req.url).pathname;
    const route = `${req.method} ${path}`;
    routes.set(route, (routes.get(route) ?? 0) + 1);
    const completion = path === "/v1/completions";
    if (completion) peak = Math.max(peak, ++inFlight);
    let res: Response;
    try {
      res = await fetch(target + path, {
        method: req.method,
        headers: req.headers,
        body: req.method === "POST" ? await req.text() : undefined,
      });
    } finally {
      if (completion) inFlight--;
    }
    if (!completion || !res.ok) return res;
    completions++;
    const body = await res.json();
    body.choices.forEach(rewrite);
    return Response.json(body);
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    get completions() {
      return completions;
    },
    get peak() {
      return peak;
    },
    routes,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}
