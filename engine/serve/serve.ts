/**
 * Starts the model server: opens the runtime, loads the model, starts the batching loop and
 * listens (127.0.0.1 unless told otherwise).
 */
import type { FusedOp } from "../../adapters/model/mod.ts";
import { type DeviceChoice, openServeRuntime } from "./runtime-choice.ts";
import { type AllowedHosts, allowedHosts } from "../../events/http/mod.ts";
import { serveApp } from "./app.ts";
import { continuousScheduler } from "./continuous-scheduler.ts";
import { type AdapterLimits, openServedModel, type ServedModel } from "./served-model.ts";

/** How to serve. */
export interface ServeOptions extends AdapterLimits {
  /** "embedded" or an HF checkpoint directory. */
  readonly model: string;
  /** The base's name in requests (default: `model`). */
  readonly servedModelName?: string;
  readonly device: DeviceChoice;
  readonly threads: number;
  /** Decoder parts built as one node each (FUSED_OPS); default none. */
  readonly fused?: readonly FusedOp[];
  readonly hostname: string;
  /** 0: any free port. */
  readonly port: number;
  /** Host names answered besides the bound address and localhost. */
  readonly allowHosts: readonly string[];
  /** Sequences decoding at once per batch (per adapter) at most. */
  readonly maxBatch: number;
  readonly maxBodyBytes: number;
  /** Writes one request's log line (request-log.ts). */
  readonly log: (line: string) => void;
}

/** A running server. */
export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** Resolves when the server has shut down. */
  readonly finished: Promise<void>;
  /** Stops listening, lets running sequences end, frees the model. */
  close(): Promise<void>;
}

/**
 * Serves `options.model` until `close`; a taken port is Deno's AddrInUse, the model freed first.
 *
 * @example
 * ```ts
 * import { startServer } from "./serve.ts";
 *
 * const server = await startServer({
 *   model: "embedded",
 *   device: "cpu",
 *   threads: 1,
 *   hostname: "127.0.0.1",
 *   port: 0,
 *   allowHosts: [],
 *   loraDirs: [],
 *   maxLoras: 8,
 *   maxLoraRank: 64,
 *   maxBatch: 64,
 *   maxBodyBytes: 1 << 20,
 *   log: console.error,
 * });
 * console.log(server.url); // http://127.0.0.1:PORT
 * await server.close();
 * ```
 */
export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const runtime = await openServeRuntime(options.device, options.threads);
  let model: ServedModel;
  try {
    model = await openServedModel(
      runtime,
      options.model,
      options,
      options.servedModelName,
      options.fused,
    );
  } catch (err) {
    await runtime.close();
    throw err;
  }
  const scheduler = continuousScheduler({
    hold: (weights) => model.hold(weights),
    maxRows: options.maxBatch,
    padTokenId: model.tokenizer.padTokenId ?? 0,
  });
  let hosts: AllowedHosts = allowedHosts({ hostname: options.hostname, port: options.port });
  const app = serveApp({ model, scheduler }, {
    hosts: () => hosts,
    maxBodyBytes: options.maxBodyBytes,
    log: options.log,
  });
  const release = async () => {
    await scheduler.close();
    await model.close();
    await runtime.close();
  };
  let server: Deno.HttpServer<Deno.NetAddr>;
  try {
    server = Deno.serve(
      { hostname: options.hostname, port: options.port, onListen: () => {} },
      (request, info) => app.fetch(request, info),
    );
  } catch (err) {
    // The port is taken, say: the model loaded for nothing is freed before the error goes up.
    await release();
    throw err;
  }
  const port = server.addr.port;
  hosts = allowedHosts({ hostname: options.hostname, port }, options.allowHosts);
  const host = options.hostname.includes(":") ? `[${options.hostname}]` : options.hostname;
  let closing: Promise<void> | null = null;
  const close = () =>
    closing ??= (async () => {
      await server.shutdown();
      await release();
    })();
  return {
    url: `http://${host}:${port}`,
    port,
    finished: server.finished.then(() => closing ?? undefined),
    close,
  };
}
