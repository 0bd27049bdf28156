/**
 * The model server's routes on Hono: OpenAI's `/v1/models`, `/v1/completions` and
 * `/v1/chat/completions`, vLLM's `/v1/load_lora_adapter` and `/v1/unload_lora_adapter`, SGLang's
 * `/generate`, `/load_lora_adapter` and `/unload_lora_adapter`, and `/health`. Every request gets a
 * line in the request log (request-log.ts) and passes the Host guard (DNS rebinding), the cross-site guard (a request from another site's page, or a
 * POST that is not JSON, which a page can send without asking) and a body size limit; every
 * refusal is OpenAI's error JSON with its status, and an unexpected failure is a 500 of the same
 * shape: the server stays up.
 */
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { type AllowedHosts, hostGuard, sameOriginOnly } from "../../events/http/mod.ts";
import { ApiError } from "./api-error.ts";
import { chatCompletions } from "./chat-completions.ts";
import { completions } from "./completions.ts";
import { generate } from "./generate.ts";
import { loadAdapterRequest, parseBody, unloadAdapterRequest } from "./request-fields.ts";
import type { ServeContext } from "./request-context.ts";
import { noteUsage, requestLog, type ServeEnv } from "./request-log.ts";

/** What the app needs besides the model. */
export interface AppOptions {
  /** Read per request: the server fills it in once it knows its port. */
  readonly hosts: () => AllowedHosts;
  /** Largest request body in bytes. */
  readonly maxBodyBytes: number;
  /** Writes one request's log line. */
  readonly log: (line: string) => void;
}

const errorResponse = (err: ApiError) =>
  new Response(JSON.stringify(err.body()), {
    status: err.status,
    headers: { "content-type": "application/json" },
  });

/**
 * Builds the app over a served model and its scheduler.
 *
 * @example
 * ```ts
 * import type { AllowedHosts } from "../../events/http/mod.ts";
 * import { serveApp } from "./app.ts";
 * import type { ServeContext } from "./request-context.ts";
 *
 * declare const ctx: ServeContext; // the served model and its scheduler
 * declare const hosts: AllowedHosts; // allowedHosts({ hostname, port }) once the port is known
 * const app = serveApp(ctx, { hosts: () => hosts, maxBodyBytes: 1 << 20, log: console.error });
 * Deno.serve({ port: 8000 }, (request, info) => app.fetch(request, info));
 * ```
 */
export function serveApp(ctx: ServeContext, options: AppOptions): Hono<ServeEnv> {
  const app = new Hono<ServeEnv>();
  app.use(
    requestLog(options.log),
    hostGuard(options.hosts, {
      server: "this model server",
      command: "deno task serve",
      respond: (_c, message) =>
        errorResponse(new ApiError(421, message, null, "misdirected_request")),
    }),
    sameOriginOnly({
      server: "this model server",
      body: "in JSON (with curl: --json BODY, or -H 'Content-Type: application/json')",
      respond: (_c, status, message) => errorResponse(new ApiError(status, message)),
    }),
  );
  app.use(
    bodyLimit({
      maxSize: options.maxBodyBytes,
      onError: () => {
        throw new ApiError(
          413,
          `the request body is over ${options.maxBodyBytes} bytes, the most this server reads ` +
            "(--max-body-bytes)",
          null,
          "request_too_large",
        );
      },
    }),
  );

  app.get("/health", (c) => c.json({ status: "ok", ...ctx.scheduler.load() }));

  // vLLM's model cards: the base, then one per adapter with the base as parent
  // (vllm/entrypoints/openai/models/serving.py at 00153c8b: `OpenAIModelRegistry.
  // show_available_models` and `OpenAIServingModels.show_available_models`).
  app.get("/v1/models", (c) => {
    const m = ctx.model;
    const card = (id: string, root: string, parent: string | null, created: number) => ({
      id,
      object: "model",
      created,
      owned_by: "polyrl",
      root,
      parent,
      max_model_len: m.config.maxPositionEmbeddings,
      permission: [],
    });
    return c.json({
      object: "list",
      data: [
        card(m.name, m.root, null, m.created),
        ...m.adapters().map((a) => card(a.name, a.path, m.name, a.created)),
      ],
    });
  });

  app.post("/v1/completions", (c) => completions(c, ctx));
  app.post("/v1/chat/completions", (c) => chatCompletions(c, ctx));

  // vLLM answers a successful load or unload with 200 and a plain-text line
  // (vllm/entrypoints/serve/lora/api_router.py at 27873cab, `load_lora_adapter` and
  // `unload_lora_adapter`; the messages are models/serving.py's, at 00153c8b).
  app.post("/v1/load_lora_adapter", async (c) => {
    const body = parseBody(loadAdapterRequest, await c.req.text());
    await ctx.model.loadAdapter(body.lora_name, body.lora_path);
    noteUsage(c, { model: body.lora_name });
    return c.text(`Success: LoRA adapter '${body.lora_name}' added successfully.`);
  });
  app.post("/v1/unload_lora_adapter", async (c) => {
    const body = parseBody(unloadAdapterRequest, await c.req.text());
    ctx.model.unloadAdapter(body.lora_name);
    noteUsage(c, { model: body.lora_name });
    return c.text(`Success: LoRA adapter '${body.lora_name}' removed successfully.`);
  });

  // SGLang's routes (python/sglang/srt/entrypoints/http_server.py at 0025436e): /generate, and
  // LoRA loads and unloads answered as LoadLoRAAdapterReqOutput, `{success, error_message,
  // loaded_adapters}`, 200 on success and 400 otherwise. A body SGLang could not parse is its
  // RequestValidationError, a 400 in the error envelope, as here.
  app.post("/generate", (c) => generate(c, ctx));
  const sglangAnswer = async (c: Context, name: string, change: () => Promise<unknown>) => {
    let error: string | null = null;
    try {
      await change();
      noteUsage(c, { model: name });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      error = err.message;
    }
    const loaded = Object.fromEntries(ctx.model.adapters().map((a) => [a.name, a.path]));
    return c.json({ success: error === null, error_message: error, loaded_adapters: loaded }, {
      status: error === null ? 200 : 400,
    });
  };
  app.post("/load_lora_adapter", async (c) => {
    const body = parseBody(loadAdapterRequest, await c.req.text());
    return sglangAnswer(
      c,
      body.lora_name,
      () => ctx.model.loadAdapter(body.lora_name, body.lora_path),
    );
  });
  app.post("/unload_lora_adapter", async (c) => {
    const body = parseBody(unloadAdapterRequest, await c.req.text());
    return sglangAnswer(
      c,
      body.lora_name,
      () => Promise.resolve().then(() => ctx.model.unloadAdapter(body.lora_name)),
    );
  });

  app.notFound((c) =>
    errorResponse(
      new ApiError(
        404,
        `no route ${c.req.method} ${new URL(c.req.url).pathname}; this server answers GET ` +
          "/v1/models, POST /v1/completions, /v1/chat/completions, /v1/load_lora_adapter, " +
          "/v1/unload_lora_adapter, /generate, /load_lora_adapter, /unload_lora_adapter",
      ),
    )
  );
  app.onError((err) => {
    if (err instanceof ApiError) return errorResponse(err);
    console.error(`error: ${err.stack ?? err.message}`);
    return errorResponse(new ApiError(500, `the server failed on this request: ${err.message}`));
  });
  return app;
}
