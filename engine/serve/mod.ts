/**
 * The OpenAI-compatible model server (`deno task serve`): completions and chat completions on the
 * project's models, LoRA adapters loaded and unloaded at run time with vLLM's endpoints, sampling
 * on keyed draws, concurrent requests batched. See docs/SCALE-OUT.md, "serve".
 *
 * @example
 * ```ts
 * import { startServer } from "./mod.ts";
 * const server = await startServer({ model: "embedded", device: "cpu", threads: 1,
 *   hostname: "127.0.0.1", port: 0, allowHosts: [], loraDirs: ["adapters"], maxLoras: 8,
 *   maxLoraRank: 64, maxBatch: 64, maxBodyBytes: 1 << 20, log: console.error });
 * console.log(server.url);
 * ```
 */
export { ApiError } from "./api-error.ts";
export { type RunningServer, type ServeOptions, startServer } from "./serve.ts";
export { type DeviceChoice, SERVE_DEVICES } from "./runtime-choice.ts";
export {
  choiceCoordinates,
  type DrawPlace,
  keyedChooser,
  SERVE_SAMPLE_PURPOSE,
} from "./sampling.ts";
export { MAX_CHOICES, MAX_LOGPROBS, MAX_N, MAX_PROMPTS } from "./request-fields.ts";
export type { Sequence, SequenceEnd, SequenceScheduler } from "./scheduler.ts";
export { ServeModelError } from "./served-model.ts";
