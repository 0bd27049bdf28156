/**
 * `deno task serve --model DIR|embedded [--device cpu|wasm|webgpu|webgpu-web] [--port P] [--host H] ...`:
 * an OpenAI-compatible server for the project's models on 127.0.0.1:8000 (vLLM's port) unless told
 * otherwise (engine/serve/, docs/SCALE-OUT.md). It prints `serving MODEL at URL` once it listens,
 * logs one line per request on stderr (or to `--log FILE`), and stops on SIGINT or SIGTERM after
 * the sequences running then have ended. A port in use is exit 2 naming a free one.
 */
import {
  commandExitCode,
  defineCommand,
  listenOrSuggestPort,
  UsageError,
  userPath,
} from "../../events/cli/mod.ts";
import { readModelConfig } from "../../adapters/hf/mod.ts";
import {
  EMBEDDED_MODEL_DIR,
  FUSED_OPS,
  type FusedOp,
  fusedOpsMisfit,
} from "../../adapters/model/mod.ts";
import { HOST_NAME } from "../../events/http/mod.ts";
import { MAX_THREADS } from "../config/mod.ts";
import { type DeviceChoice, SERVE_DEVICES, type ServeOptions, startServer } from "../serve/mod.ts";

const USAGE =
  "deno task serve --model DIR|embedded [--device cpu|wasm|webgpu|webgpu-web] [--port P] " +
  "[--host H] [--lora-dir DIR]... [--max-loras N] [--max-lora-rank R] [--allow-host NAME]... " +
  "[--log FILE]";

const cli = defineCommand({
  name: "serve",
  usage: USAGE,
  summary: "Serves a model over OpenAI's HTTP API: GET /v1/models, POST /v1/completions and " +
    "/v1/chat/completions (streaming with server-sent events, logprobs, token ids), and LoRA " +
    "adapters loaded at run time with vLLM's POST /v1/load_lora_adapter and " +
    "/v1/unload_lora_adapter, picked per request by `model`. Sampling uses keyed draws: a " +
    "request with a seed gets the same random draws whatever else is batched with it. " +
    "/v1/completions takes the prompt as it is; /v1/chat/completions renders the chat " +
    "template, as training does (docs/SCALE-OUT.md, 'What training sampled').",
  options: {
    model: {
      type: "string",
      value: "DIR|embedded",
      help: "the base model: an HF checkpoint folder (config.json, safetensors, tokenizer.json) " +
        "or embedded",
    },
    "served-model-name": {
      type: "string",
      value: "NAME",
      help: "the base's name in requests and /v1/models (default: the --model value)",
    },
    device: {
      type: "string",
      default: "cpu",
      value: "cpu|wasm|webgpu|webgpu-web",
      help: "onnxruntime backend (default cpu)",
    },
    threads: {
      type: "string",
      default: "1",
      value: "N",
      help: `intra-op threads on cpu, 1..${MAX_THREADS} (default 1)`,
    },
    fused: {
      type: "string",
      default: "",
      value: "OP[,OP]",
      help: `parts built as fewer onnxruntime nodes, as a run's runtime.fused_ops (grad_norm is ` +
        `the train step's and changes nothing here): ` +
        `${FUSED_OPS.join(", ")} (default none)`,
    },
    port: {
      type: "string",
      default: "8000",
      value: "P",
      help: "port to listen on (default 8000, vLLM's; 0 = any free)",
    },
    host: {
      type: "string",
      default: "127.0.0.1",
      value: "ADDR",
      help: "address to bind (default 127.0.0.1, loopback only)",
    },
    "allow-host": {
      type: "string",
      multiple: true,
      default: [],
      value: "NAME",
      help: "also answer requests for this Host name (repeatable), e.g. behind a proxy",
    },
    "lora-dir": {
      type: "string",
      multiple: true,
      default: [],
      value: "DIR",
      path: true,
      help: "a folder whose adapter folders /v1/load_lora_adapter may read (repeatable; none: " +
        "loading is refused)",
    },
    "max-loras": {
      type: "string",
      default: "8",
      value: "N",
      help: "adapters loaded at once at most, as vLLM's --max-loras (default 8)",
    },
    "max-lora-rank": {
      type: "string",
      default: "64",
      value: "R",
      help: "largest adapter rank taken, as vLLM's --max-lora-rank (default 64)",
    },
    "max-batch": {
      type: "string",
      default: "64",
      value: "N",
      help: "sequences generated in one batch at most (default 64)",
    },
    "max-body-bytes": {
      type: "string",
      default: String(4 << 20),
      value: "BYTES",
      help: `largest request body read (default ${4 << 20})`,
    },
    log: {
      type: "string",
      value: "FILE",
      path: true,
      output: true,
      help: "append the request log (one line per request) to FILE instead of stderr",
    },
  },
  examples: [
    "deno task serve --model embedded",
    "deno task serve --model models/Qwen2.5-0.5B-Instruct --port 8001 --lora-dir adapters",
  ],
});

function count(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--${name} ${value}: expected a whole number from ${min} to ${max}`);
  }
  return Number(value);
}

/**
 * Appends each line to `path`, opened per line so that a log rotated by renaming starts a new
 * file; a line that cannot be written goes to stderr with the reason, and the server goes on.
 */
function requestLogFile(path: string): (line: string) => void {
  try {
    Deno.writeTextFileSync(path, "", { append: true });
  } catch (err) {
    throw new UsageError(
      `--log ${path}: cannot write it (${(err as Error).message}); name a file in a folder ` +
        "that exists and is writable",
    );
  }
  return (line) => {
    try {
      Deno.writeTextFileSync(path, line + "\n", { append: true });
    } catch (err) {
      console.error(`${line} (not written to --log ${path}: ${(err as Error).message})`);
    }
  };
}

/** `deno task serve ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    if (positionals.length > 0) {
      throw new UsageError(`unexpected argument ${positionals[0]}; name the model with --model`);
    }
    if (values.model === undefined) {
      throw new UsageError("--model is required: an HF checkpoint folder or embedded");
    }
    // A folder resolves against where the user ran the task; "embedded" names the built-in model.
    const model = values.model === "embedded" ? "embedded" : userPath(values.model);
    if (model !== "embedded") {
      const info = await Deno.stat(model).catch(() => null);
      if (info === null || !info.isDirectory) {
        throw new UsageError(
          `--model ${model}: no such folder; give an HF checkpoint folder (config.json, ` +
            "*.safetensors, tokenizer.json) or embedded",
        );
      }
    }
    if (!(SERVE_DEVICES as readonly string[]).includes(values.device)) {
      throw new UsageError(
        `--device must be one of ${SERVE_DEVICES.join(", ")}; got ${values.device}`,
      );
    }
    for (const name of values["allow-host"]) {
      if (!HOST_NAME.test(name)) {
        throw new UsageError(
          `--allow-host ${name}: expected a host name or address without scheme, port or path ` +
            "(e.g. --allow-host lab.example.org)",
        );
      }
    }
    for (const dir of values["lora-dir"]) {
      const info = await Deno.stat(dir).catch(() => null);
      if (info === null || !info.isDirectory) {
        throw new UsageError(`--lora-dir ${dir}: no such folder`);
      }
    }
    const fused = values.fused === "" ? [] : values.fused.split(",");
    if (fused.length > 0) {
      // Checked against the model's config.json now, not when the first request builds graphs.
      const dir = model === "embedded" ? EMBEDDED_MODEL_DIR.pathname : model;
      const misfit = fusedOpsMisfit(await readModelConfig(dir), fused);
      if (misfit !== null) throw new UsageError(`--fused ${values.fused}: ${misfit}`);
    }
    const options: ServeOptions = {
      model,
      servedModelName: values["served-model-name"],
      device: values.device as DeviceChoice,
      threads: count("threads", values.threads, 1, MAX_THREADS),
      fused: fused as FusedOp[],
      hostname: values.host,
      port: count("port", values.port, 0, 65535),
      allowHosts: values["allow-host"],
      loraDirs: values["lora-dir"],
      maxLoras: count("max-loras", values["max-loras"], 1, 1024),
      maxLoraRank: count("max-lora-rank", values["max-lora-rank"], 1, 4096),
      maxBatch: count("max-batch", values["max-batch"], 1, 4096),
      maxBodyBytes: count("max-body-bytes", values["max-body-bytes"], 1024, 1 << 30),
      log: values.log === undefined ? console.error : requestLogFile(values.log),
    };
    const server = await listenOrSuggestPort(
      options.hostname,
      options.port,
      () => startServer(options),
    );
    console.log(`serving ${values["served-model-name"] ?? model} at ${server.url}`);
    const stop = () => void server.close();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    await server.finished;
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
