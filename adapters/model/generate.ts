/**
 * Batched generation with a KV cache: one prefill run over the left-padded distinct prompts (rows
 * with the same prompt, a group's samples, share one prefill and copy its cache rows), then one
 * decode run per new token, the cache staying on the device between runs; finished rows leave the
 * decode batch (their cache rows are gathered out once they are a quarter of it), so they stop
 * costing compute. The host picks each token from the logits through a caller-given
 * `TokenChooser` (the engine passes temperature / top-p sampling over Philox keyed draws, so every
 * token is a pure function of its coordinates), and records the token's log-probability under the
 * policy that sampled it: log softmax(logits / T) at the request's temperature, the number the
 * train step recomputes for the same token (veRL and TRL divide the logits by the sampling
 * temperature the same way).
 */
import type { DeviceTensor, Feed, Runtime, Session } from "../onnx/runtime/mod.ts";
import { hostTensor } from "../onnx/runtime/mod.ts";
import { logprobTemperature } from "../onnx/train-step-spec.ts";
import { ModelError } from "./errors.ts";
import { buildCacheRowsGraph, buildDecodeGraph, buildPrefillGraph, MODEL_IO } from "./graphs.ts";
import type { DecoderSpec } from "./parameters.ts";
import type { ParamFeeds } from "./weights.ts";

/**
 * Picks the next token of row `row` from its logits (float32 [vocab]); `index` is the position of
 * the token within the row's generated tokens (the draw index).
 */
export type TokenChooser = (logits: Float32Array, row: number, index: number) => number;

/** Stop strings, checked on the decoded text of each row's generated tokens. */
export interface StopStrings {
  readonly strings: readonly string[];
  readonly decode: (ids: readonly number[]) => string;
}

/** One batched generation. */
export interface GenerationRequest {
  /** Token ids per row (at least one each); rows are left-padded to the longest. */
  readonly prompts: readonly (readonly number[])[];
  /** New tokens per row at most. */
  readonly maxTokens: number;
  readonly choose: TokenChooser;
  /**
   * The temperature `choose` samples at: logprobs are of softmax(logits / T); 0 (greedy) records
   * them at T = 1 (see `logprobTemperature`).
   */
  readonly temperature: number;
  /** Tokens that end a row (kept as its last token). */
  readonly stopTokenIds?: readonly number[];
  readonly stop?: StopStrings;
  /** Token fed at padding and after a row has finished (masked out either way); default 0. */
  readonly padTokenId?: number;
  /**
   * Prefill each distinct prompt once and copy its cache to the rows that share it (default
   * true); false prefills every row, for comparison.
   */
  readonly sharePrompts?: boolean;
  /**
   * Finished rows leave the decode batch (their cache rows are gathered out on the device once
   * they are a quarter of it), so later steps run on fewer rows (default true); false keeps every
   * row to the end, fed padding, for comparison.
   */
  readonly dropFinished?: boolean;
}

/** Why a row stopped. */
export type FinishReason = "stop-token" | "stop-string" | "length";

/** One row's result. */
export interface GeneratedRow {
  readonly tokens: readonly number[];
  /** log p(token | prefix) under softmax(logits / T) of the request's temperature, per token. */
  readonly logprobs: readonly number[];
  readonly finishReason: FinishReason;
}

/** Loaded prefill and decode sessions of one decoder spec on one runtime. */
export interface Generator {
  readonly kind: "generator";
  readonly spec: DecoderSpec;
  /** Runs one batch; `params` feeds every `param:<name>` input (base and adapter). */
  generate(params: ParamFeeds, request: GenerationRequest): Promise<GeneratedRow[]>;
  release(): Promise<void>;
}

/**
 * Builds and loads the prefill and decode graphs of `spec`.
 *
 * @example
 * const gen = await createGenerator(runtime, spec);
 * const rows = await gen.generate({ ...base.feeds, ...adapter }, { prompts, maxTokens: 32, choose });
 */
export async function createGenerator(runtime: Runtime, spec: DecoderSpec): Promise<Generator> {
  const prefillGraph = buildPrefillGraph(spec);
  const decodeGraph = buildDecodeGraph(spec);
  const prefill = await runtime.load(prefillGraph.model, {
    keepOnDevice: prefillGraph.keepOnDevice,
  });
  const decode = await runtime.load(decodeGraph.model, { keepOnDevice: decodeGraph.keepOnDevice });
  const cacheRowsGraph = buildCacheRowsGraph(spec);
  const cacheRows = await runtime.load(cacheRowsGraph.model, {
    keepOnDevice: cacheRowsGraph.keepOnDevice,
  });
  const sessions = { prefill, decode, cacheRows };
  return Object.freeze({
    kind: "generator",
    spec,
    generate: (params: ParamFeeds, request: GenerationRequest) =>
      runGeneration(spec, sessions, params, request),
    release: async () => {
      await prefill.release();
      await decode.release();
      await cacheRows.release();
    },
  });
}

/** For each row, the index of its prompt among the distinct prompts (first seen first). */
function distinctPrompts(prompts: readonly (readonly number[])[]) {
  const first = new Map<string, number>();
  const distinct: (readonly number[])[] = [];
  const rowOf = prompts.map((p) => {
    const key = p.join(",");
    let at = first.get(key);
    if (at === undefined) {
      at = distinct.length;
      first.set(key, at);
      distinct.push(p);
    }
    return at;
  });
  return { distinct, rowOf };
}

async function runGeneration(
  spec: DecoderSpec,
  sessions: { prefill: Session; decode: Session; cacheRows: Session },
  params: ParamFeeds,
  request: GenerationRequest,
): Promise<GeneratedRow[]> {
  const { prefill, decode, cacheRows } = sessions;
  const { prompts, maxTokens } = request;
  const rows = prompts.length;
  if (rows === 0) return [];
  if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
    throw new ModelError("maxTokens", `must be a positive integer, got ${maxTokens}`);
  }
  const vocab = spec.config.vocabSize;
  const pad = request.padTokenId ?? 0;
  const temperature = logprobTemperature(request.temperature);
  prompts.forEach((p, i) => {
    if (p.length === 0) throw new ModelError(`prompts[${i}]`, "is empty; give at least one token");
    const bad = p.find((t) => !Number.isInteger(t) || t < 0 || t >= vocab);
    if (bad !== undefined) {
      throw new ModelError(`prompts[${i}]`, `token ${bad} is outside [0, ${vocab})`);
    }
  });
  const width = Math.max(...prompts.map((p) => p.length));
  const total = width + maxTokens - 1;
  if (total > spec.config.maxPositionEmbeddings) {
    throw new ModelError(
      "maxTokens",
      `longest prompt ${width} + ${maxTokens} new tokens exceeds max_position_embeddings ` +
        `${spec.config.maxPositionEmbeddings}; shorten the prompt or lower maxTokens`,
    );
  }
  // mask holds every position a row will ever have; each run feeds its prefix.
  const mask = new Float32Array(rows * total);
  prompts.forEach((p, r) => mask.fill(1, r * total + width - p.length, r * total + total));
  const shared = request.sharePrompts === false
    ? { distinct: prompts, rowOf: prompts.map((_, r) => r) }
    : distinctPrompts(prompts);
  const prefillRows = shared.distinct.length;
  const tokens = new Int32Array(prefillRows * width).fill(pad);
  const prefillMask = new Float32Array(prefillRows * width);
  shared.distinct.forEach((p, r) => {
    tokens.set(p, r * width + width - p.length);
    prefillMask.fill(1, r * width + width - p.length, (r + 1) * width);
  });
  const maskPrefix = (batch: readonly number[], len: number) => {
    const out = new Float32Array(batch.length * len);
    batch.forEach((r, b) => out.set(mask.subarray(r * total, r * total + len), b * len));
    return hostTensor("float32", [batch.length, len], out);
  };

  const layers = spec.config.numLayers;
  let cache: Record<string, DeviceTensor> = {};
  const out = prompts.map(() => ({
    tokens: [] as number[],
    logprobs: [] as number[],
    finishReason: null as FinishReason | null,
  }));
  const stopIds = new Set(request.stopTokenIds ?? []);
  const allRows = prompts.map((_, r) => r);
  try {
    let result = await prefill.run({
      ...params,
      [MODEL_IO.tokens]: hostTensor("int32", [prefillRows, width], tokens),
      [MODEL_IO.attentionMask]: hostTensor("float32", [prefillRows, width], prefillMask),
    });
    cache = takeCache(result.device, layers, cache);
    let logits = result.host[MODEL_IO.logits].data as Float32Array;
    // Row r's logits and cache sit at index at[r] of the last run's outputs: its prompt's prefill
    // row first, then its place in the decode batch. The chooser always hears r, never the batch
    // index, so rows leaving the batch (or sharing a prefill) never change a draw.
    const at = Int32Array.from(shared.rowOf);
    let cacheSize = prefillRows;
    // The rows the cache holds, in order (before the first decode: every row, through `at`).
    let batch: readonly number[] = allRows;
    for (let step = 0;; step++) {
      for (let r = 0; r < rows; r++) {
        const row = out[r];
        if (row.finishReason !== null) continue;
        const l = logits.subarray(at[r] * vocab, (at[r] + 1) * vocab);
        const token = request.choose(l, r, row.tokens.length);
        if (!Number.isInteger(token) || token < 0 || token >= vocab) {
          throw new ModelError(
            "choose",
            `returned ${token} for row ${r}; ids are in [0, ${vocab})`,
          );
        }
        row.tokens.push(token);
        row.logprobs.push(tokenLogprob(l, token, temperature));
        if (stopIds.has(token)) row.finishReason = "stop-token";
        else if (request.stop && hasStopString(row.tokens, request.stop)) {
          row.finishReason = "stop-string";
        } else if (row.tokens.length === maxTokens) row.finishReason = "length";
      }
      const unfinished = allRows.filter((r) => out[r].finishReason === null);
      if (unfinished.length === 0) break;
      if (request.dropFinished !== false) {
        // A gather copies the whole cache, about what a decode step costs, so finished rows leave
        // once they are a quarter of the batch (a dozen gathers for 32 rows; on the bench, faster
        // than after each row or at half), or with the prefix-sharing copy, made anyway. The rule
        // reads only the tokens so far, never timing: each decode's rows are the same on replay.
        const copying = cacheSize !== batch.length || batch.some((r, b) => at[r] !== b);
        if (copying || unfinished.length * 4 <= batch.length * 3) batch = unfinished;
      }
      const pick = batch.map((r) => at[r]);
      if (pick.length !== cacheSize || pick.some((from, b) => from !== b)) {
        result = await cacheRows.run({
          ...cacheFeeds(cache, layers),
          [MODEL_IO.cacheRows]: hostTensor("int32", [pick.length], Int32Array.from(pick)),
        });
        cache = takeCache(result.device, layers, cache);
        cacheSize = pick.length;
      }
      batch.forEach((r, b) => at[r] = b);
      // A finished row kept in the batch is fed padding; its outputs are never read.
      const next = Int32Array.from(
        batch,
        (r) => out[r].finishReason === null ? out[r].tokens.at(-1)! : pad,
      );
      result = await decode.run({
        ...params,
        ...cacheFeeds(cache, layers),
        [MODEL_IO.tokens]: hostTensor("int32", [batch.length, 1], next),
        [MODEL_IO.attentionMask]: maskPrefix(batch, width + step + 1),
      });
      cache = takeCache(result.device, layers, cache);
      logits = result.host[MODEL_IO.logits].data as Float32Array;
    }
  } finally {
    Object.values(cache).forEach((t) => t.dispose());
  }
  return out.map((row) =>
    Object.freeze({
      tokens: Object.freeze(row.tokens),
      logprobs: Object.freeze(row.logprobs),
      finishReason: row.finishReason!,
    })
  );
}

/** Moves a run's present keys/values into the cache, freeing the ones they replace. */
function takeCache(
  device: Readonly<Record<string, DeviceTensor>>,
  layers: number,
  old: Record<string, DeviceTensor>,
): Record<string, DeviceTensor> {
  const next: Record<string, DeviceTensor> = {};
  for (let i = 0; i < layers; i++) {
    next[MODEL_IO.pastKey(i)] = device[MODEL_IO.presentKey(i)];
    next[MODEL_IO.pastValue(i)] = device[MODEL_IO.presentValue(i)];
  }
  Object.values(old).forEach((t) => t.dispose());
  return next;
}

function cacheFeeds(cache: Record<string, DeviceTensor>, layers: number): Record<string, Feed> {
  const feeds: Record<string, Feed> = {};
  for (let i = 0; i < layers; i++) {
    feeds[MODEL_IO.pastKey(i)] = cache[MODEL_IO.pastKey(i)];
    feeds[MODEL_IO.pastValue(i)] = cache[MODEL_IO.pastValue(i)];
  }
  return feeds;
}

/**
 * log softmax(logits / temperature)[token] in float64 (max-shifted log-sum-exp; the temperature
 * is the logprob one, > 0). Temperature 1 divides exactly: the untempered value, bit for bit.
 *
 * @example tokenLogprob(new Float32Array([0, 0]), 1, 1) // -Math.LN2
 * @example tokenLogprob(new Float32Array([0, 1]), 1, 0.5) // -log(1 + e^-2) ≈ -0.1269
 */
export function tokenLogprob(
  logits: ArrayLike<number>,
  token: number,
  temperature: number,
): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i]);
  let sum = 0;
  for (let i = 0; i < logits.length; i++) sum += Math.exp((logits[i] - max) / temperature);
  return (logits[token] - max) / temperature - Math.log(sum);
}

/** True when the decoded tail of `tokens` contains a stop string (checked after every token). */
function hasStopString(tokens: readonly number[], stop: StopStrings): boolean {
  const longest = Math.max(...stop.strings.map((s) => s.length));
  // A character spans at most 4 byte-level tokens, so this tail holds any stop string whole.
  const text = stop.decode(tokens.slice(-4 * longest));
  return stop.strings.some((s) => text.includes(s));
}
