/**
 * The inference servers of the openai rollout backend: each request goes to the endpoint with the
 * fewest requests in flight (ties: the first listed), waits while every endpoint has
 * `max_in_flight` of them, and fails after `timeout_s` with an error naming the endpoint, the
 * path and what it answered. Adapter loads go to every endpoint.
 */
import type { NormalizedConfig } from "../../config/mod.ts";

/** A server did not answer, or answered with an error. */
export class EndpointError extends Error {
  override name = "EndpointError";
  constructor(
    readonly endpoint: string,
    readonly path: string,
    readonly detail: string,
  ) {
    super(`rollout endpoint ${endpoint}${path}: ${detail}`);
  }
}

/** The config's `rollout` section with the backend chosen. */
export type OpenAIRollout = NonNullable<NormalizedConfig["rollout"]>;

/** A JSON request to one endpoint, or to the least busy. */
export interface EndpointPool {
  readonly endpoints: readonly string[];
  /** POSTs `body` to the endpoint with the fewest requests in flight; its JSON answer. */
  post(path: string, body: unknown): Promise<{ endpoint: string; json: unknown }>;
  /** POSTs `body` to `endpoint`; its answer's text. */
  postTo(endpoint: string, path: string, body: unknown): Promise<string>;
}

/**
 * The pool of a config's endpoints; the API key is read from `api_key_env` now.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { endpointPool } from "./endpoint-pool.ts";
 *
 * declare const config: NormalizedConfig; // its rollout backend openai
 * declare const body: unknown; // a `/v1/completions` request
 * const pool = endpointPool(config.rollout!);
 * const { endpoint, json } = await pool.post("/v1/completions", body);
 * ```
 */
export function endpointPool(rollout: OpenAIRollout): EndpointPool {
  const endpoints = rollout.endpoints.map((e) => e.replace(/\/+$/, ""));
  const key = rollout.api_key_env === undefined ? undefined : Deno.env.get(rollout.api_key_env);
  if (rollout.api_key_env !== undefined && !key) {
    throw new Error(
      `rollout.api_key_env names ${rollout.api_key_env}, which is not set; export it or drop ` +
        "api_key_env",
    );
  }
  const inFlight = endpoints.map(() => 0);
  const waiting: (() => void)[] = [];

  async function send(endpoint: string, path: string, body: unknown): Promise<string> {
    let res: Response;
    try {
      res = await fetch(endpoint + path, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(key ? { authorization: `Bearer ${key}` } : {}),
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(rollout.timeout_s * 1000),
      });
    } catch (err) {
      const e = err as Error;
      const detail = e.name === "TimeoutError"
        ? `no answer within rollout.timeout_s = ${rollout.timeout_s} s`
        : `cannot be reached (${e.message}); is the server running?`;
      throw new EndpointError(endpoint, path, detail);
    }
    const text = await res.text().catch((err) => {
      throw new EndpointError(endpoint, path, `the answer broke off: ${(err as Error).message}`);
    });
    if (!res.ok) {
      throw new EndpointError(endpoint, path, `HTTP ${res.status}: ${text.slice(0, 500)}`);
    }
    return text;
  }

  return {
    endpoints,
    postTo: send,
    async post(path, body) {
      for (;;) {
        const free = Math.min(...inFlight);
        if (free < rollout.max_in_flight) break;
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      const i = inFlight.indexOf(Math.min(...inFlight));
      inFlight[i]++;
      try {
        const text = await send(endpoints[i], path, body);
        try {
          return { endpoint: endpoints[i], json: JSON.parse(text) };
        } catch {
          throw new EndpointError(endpoints[i], path, `answered no JSON: ${text.slice(0, 200)}`);
        }
      } finally {
        inFlight[i]--;
        waiting.shift()?.();
      }
    },
  };
}
