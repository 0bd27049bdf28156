/**
 * Continuous batching: a running decode batch that sequences join and leave between decode steps,
 * its KV cache on the device, managed per row. Each `step` (1) admits the queued sequences in
 * submission order, up to `maxRows` running: one prefill over their distinct prompts (identical
 * prompts share it), each newcomer's first token chosen from its prefill logits; (2) splices the
 * cache: finished rows leave, newcomers' rows are appended below, all left-padded to one width
 * (a newcomer shorter than the batch is padded, a longer one pads the batch) and trimmed of
 * leading columns that are padding in every row; (3) runs one decode over the batch and chooses
 * each row's next token. It follows vLLM's iteration-level scheduler (vllm/v1/core/sched/
 * scheduler.py, `Scheduler.schedule`: the RUNNING requests first, then the WAITING queue in
 * arrival order while `len(self.running) < self.max_num_running_reqs`), without paging: here the
 * cache is one dense tensor per layer, rebuilt when the rows change (by the splice graphs on a
 * GPU; on the host, a `HostKvCache` copied once with room for the rows' remaining tokens, which
 * decode then fills in place, one column per token).
 *
 * Every token is the request's own `choose(logits, index)`, so a sequence's tokens never depend
 * on which other rows share its batch; the batch only changes float32 rounding in the logits'
 * low bits (other matmul shapes). Callers that must be bit-exact on replay (rollouts) decide when
 * to call `step` and what to submit before it, so the batch of every decode is a function of the
 * tokens alone; a server runs the batch with `stepping: "auto"` and admits whatever has arrived.
 */
import type { DeviceTensor, Feed, Session } from "../onnx/runtime/mod.ts";
import { hostTensor } from "../onnx/runtime/mod.ts";
import { logprobTemperature } from "../onnx/train-step/mod.ts";
import { ModelError } from "./errors.ts";
import { MODEL_IO } from "./graphs.ts";
import { HostKvCache } from "./host-kv-cache.ts";
import type { DecoderSpec } from "./parameters.ts";
import type { ParamFeeds } from "./weights.ts";

/** Stop strings, checked on the decoded text of each row's generated tokens. */
export interface StopStrings {
  readonly strings: readonly string[];
  readonly decode: (ids: readonly number[]) => string;
}

/** Why a sequence stopped. */
export type FinishReason = "stop-token" | "stop-string" | "length";

/** One sequence's result. */
export interface GeneratedRow {
  readonly tokens: readonly number[];
  /** log p(token | prefix) under softmax(logits / T) of the request's temperature, per token. */
  readonly logprobs: readonly number[];
  readonly finishReason: FinishReason;
}

/** One sequence to generate. */
export interface SequenceRequest {
  /** Prompt token ids (at least one). */
  readonly prompt: readonly number[];
  /** New tokens at most; prompt length + maxTokens - 1 must fit max_position_embeddings. */
  readonly maxTokens: number;
  /**
   * Picks the sequence's token `index` (0 for the first new token) from its logits, float32
   * [vocab]. Keyed draws make it a pure function of (logits, index).
   */
  readonly choose: (logits: Float32Array, index: number) => number;
  /**
   * The temperature `choose` samples at: logprobs are of softmax(logits / T); 0 (greedy) records
   * them at T = 1 (see `logprobTemperature`).
   */
  readonly temperature: number;
  /** Tokens that end the sequence (kept as its last token). */
  readonly stopTokenIds?: readonly number[];
  readonly stop?: StopStrings;
  /**
   * Called with each token as soon as it is chosen (streaming); a throw ends this sequence with
   * that error and leaves the others running.
   */
  readonly onToken?: (token: number, logprob: number, index: number) => void;
  /** Aborting ends the sequence at the next step; its result rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

/** A submitted sequence. */
export interface Sequence {
  readonly kind: "sequence";
  /** Submission number within its batch, from 0. */
  readonly id: number;
  readonly request: SequenceRequest;
  /** Settles when the sequence ends (already handled: an unawaited rejection is not fatal). */
  readonly result: Promise<GeneratedRow>;
}

/** How a sequence ended in a step. */
export type SequenceOutcome =
  | { readonly kind: "finished"; readonly sequence: Sequence; readonly row: GeneratedRow }
  | { readonly kind: "failed"; readonly sequence: Sequence; readonly error: unknown };

/** Settings of one running batch (one set of parameters: one worker group, one adapter). */
export interface BatchOptions {
  /** Token fed at padding and to finished rows still in the batch (masked out); default 0. */
  readonly padTokenId?: number;
  /** Sequences decoding at once at most; queued ones wait for a place (default 64). */
  readonly maxRows?: number;
  /** Prefill identical prompts of one admission once and copy their cache rows (default true). */
  readonly sharePrompts?: boolean;
  /**
   * Finished rows leave the decode batch (default true): at the next splice, or once they are a
   * quarter of it; false keeps them, fed padding, until the batch empties (for comparison).
   */
  readonly dropFinished?: boolean;
  /**
   * When queued sequences join. `every-step` (default): at every step, as soon as there is room
   * (lowest latency: a server). `doubling`: once at least as many queued sequences as are
   * running can join (or nothing runs), so each admission at least doubles the batch and a wave
   * of n arrivals costs O(log n) prefills and splices instead of n, also when `maxRows` caps the
   * batch (throughput: rollouts). Either rule reads only counts, never timing.
   */
  readonly admission?: "every-step" | "doubling";
  /**
   * `manual` (default): the owner calls `step`, which makes every batch composition a function
   * of what the owner submitted before each step (deterministic rollouts). `auto`: steps run
   * by themselves while anything is queued or running, each admitting whatever has arrived
   * (a server).
   */
  readonly stepping?: "manual" | "auto";
}

/**
 * A running decode batch.
 *
 * @example
 * ```ts
 * import type { SequenceOutcome } from "./continuous-batch.ts";
 * import type { Generator } from "./generate.ts";
 * import type { ParamFeeds } from "./weights.ts";
 *
 * declare const generator: Generator;
 * declare const params: ParamFeeds; // the base's feeds, and an adapter's
 * declare const prompt: readonly number[];
 * declare const pick: (logits: Float32Array, index: number) => number; // keyed draws
 * declare const report: (outcome: SequenceOutcome) => void;
 * const batch = generator.openBatch(params, { padTokenId: 0 });
 * const seq = batch.submit({ prompt, maxTokens: 32, temperature: 1, choose: (l, i) => pick(l, i) });
 * while (batch.running + batch.queued > 0) for (const done of await batch.step()) report(done);
 * const row = await seq.result; // tokens, logprobs, finishReason
 * await batch.close();
 * ```
 */
export interface ContinuousBatch {
  readonly kind: "continuous-batch";
  /** Queues a sequence; it joins the batch at the next step. Throws ModelError on a bad request. */
  submit(request: SequenceRequest): Sequence;
  /**
   * Admits queued sequences, runs one decode step, and returns the sequences that ended in it
   * (aborted queued ones, then the running rows in batch order, then the newcomers in admission
   * order); their `result`s settle too. A failed
   * model run fails every sequence in the batch or being admitted, and the batch stays usable.
   * Manual stepping only; one step at a time.
   */
  step(): Promise<readonly SequenceOutcome[]>;
  /** Sequences decoding (not yet ended). */
  readonly running: number;
  /** Sequences waiting to be admitted. */
  readonly queued: number;
  /**
   * Positions (columns) of the running cache: the longest row's context after a splice, growing
   * by one per decode; 0 when nothing runs.
   */
  readonly width: number;
  /** Waits for the current step, then ends every queued and running sequence and frees the cache. */
  close(): Promise<void>;
}

/**
 * The loaded graphs a batch runs. `device-cache`: the cache stays in the runtime's memory (a GPU)
 * and graphs copy it (decode outputs the grown cache, splice graphs gather rows and columns).
 * `host-cache`: where device memory is the host's (cpu, wasm), the cache is a `HostKvCache`
 * that decode extends in place and splices copy in JS, so no run copies the whole cache.
 */
export type BatchSessions = DeviceCacheSessions | HostCacheSessions;

/** Sessions of a cache kept on the device. */
export interface DeviceCacheSessions {
  readonly kind: "device-cache";
  readonly prefill: Session;
  readonly decode: Session;
  /** Row gather of the cache (`buildCacheRowsGraph`). */
  readonly cacheRows: Session;
  /** Row and column gather (`buildCacheSpliceGraph` without join). */
  readonly cacheSelect: Session;
  /** Row and column gather of the running and the joining cache (`buildCacheSpliceGraph`). */
  readonly cacheJoin: Session;
}

/** Sessions of a host cache. */
export interface HostCacheSessions {
  readonly kind: "host-cache";
  /** `buildPrefillGraph` loaded with every output on the host. */
  readonly prefill: Session;
  /** `buildAppendDecodeGraph`. */
  readonly decode: Session;
}

type DeviceCache = Record<string, DeviceTensor>;
type Cache = DeviceCache | HostKvCache;

/** A sequence's state while it is queued or running. */
interface Row {
  readonly sequence: Sequence;
  readonly request: SequenceRequest;
  readonly stopIds: ReadonlySet<number>;
  readonly logprobTemperature: number;
  readonly tokens: number[];
  readonly logprobs: number[];
  finishReason: FinishReason | null;
  failure: { error: unknown } | null;
  readonly settle: (outcome: SequenceOutcome) => void;
}

const ended = (r: Row) => r.finishReason !== null || r.failure !== null;

/** Cache positions a running row occupies: its prompt and every token fed back so far. */
const pastLength = (r: Row) => r.request.prompt.length + r.tokens.length - 1;

/**
 * Opens a running batch on loaded sessions; `Generator.openBatch` is the public way in.
 */
export function openContinuousBatch(
  spec: DecoderSpec,
  sessions: BatchSessions,
  params: ParamFeeds,
  options: BatchOptions = {},
): ContinuousBatch {
  const vocab = spec.config.vocabSize;
  const layers = spec.config.numLayers;
  const pad = options.padTokenId ?? 0;
  const maxRows = options.maxRows ?? 64;
  if (!(maxRows >= 1)) throw new ModelError("maxRows", `must be at least 1, got ${maxRows}`);
  const sharePrompts = options.sharePrompts !== false;
  const dropFinished = options.dropFinished !== false;
  const auto = options.stepping === "auto";
  const doubling = options.admission === "doubling";

  let submitted = 0;
  let queue: Row[] = [];
  // The rows the cache holds, in cache order; `width` is its number of positions.
  let batch: Row[] = [];
  // The newcomers of the step in progress, between the queue and the batch.
  let admitting: Row[] = [];
  let cache: Cache | null = null;
  let width = 0;
  let stepping: Promise<readonly SequenceOutcome[]> | null = null;
  let pumping = false;
  let closed = false;

  /** Frees the running cache and empties the batch. */
  function dropCache() {
    disposeCache(cache);
    cache = null;
    batch = [];
    width = 0;
  }

  function validate(request: SequenceRequest) {
    const { prompt, maxTokens } = request;
    if (prompt.length === 0) throw new ModelError("prompt", "is empty; give at least one token");
    const bad = prompt.find((t) => !Number.isInteger(t) || t < 0 || t >= vocab);
    if (bad !== undefined) throw new ModelError("prompt", `token ${bad} is outside [0, ${vocab})`);
    if (!Number.isSafeInteger(maxTokens) || maxTokens < 1) {
      throw new ModelError("maxTokens", `must be a positive integer, got ${maxTokens}`);
    }
    const limit = spec.config.maxPositionEmbeddings;
    if (prompt.length + maxTokens - 1 > limit) {
      throw new ModelError(
        "maxTokens",
        `prompt ${prompt.length} + ${maxTokens} new tokens exceeds max_position_embeddings ` +
          `${limit}; shorten the prompt or lower maxTokens`,
      );
    }
  }

  function submit(request: SequenceRequest): Sequence {
    if (closed) throw new ModelError("submit", "the batch is closed; open another");
    validate(request);
    let settle!: (outcome: SequenceOutcome) => void;
    const result = new Promise<GeneratedRow>((resolve, reject) => {
      settle = (o) => o.kind === "finished" ? resolve(o.row) : reject(o.error);
    });
    result.catch(() => {});
    const sequence: Sequence = Object.freeze({
      kind: "sequence",
      id: submitted++,
      request,
      result,
    });
    queue.push({
      sequence,
      request,
      stopIds: new Set(request.stopTokenIds ?? []),
      logprobTemperature: logprobTemperature(request.temperature),
      tokens: [],
      logprobs: [],
      finishReason: null,
      failure: null,
      settle,
    });
    if (auto) pump();
    return sequence;
  }

  /** Chooses row `r`'s next token from its logits and records it; may end the row. */
  function pick(r: Row, logits: Float32Array) {
    const index = r.tokens.length;
    let token: number;
    try {
      token = r.request.choose(logits, index);
      if (!Number.isInteger(token) || token < 0 || token >= vocab) {
        throw new ModelError(
          "choose",
          `returned ${token} for token ${index} of sequence ${r.sequence.id}; ids are in [0, ${vocab})`,
        );
      }
    } catch (error) {
      r.failure = { error };
      return;
    }
    const logprob = tokenLogprob(logits, token, r.logprobTemperature);
    r.tokens.push(token);
    r.logprobs.push(logprob);
    if (r.stopIds.has(token)) r.finishReason = "stop-token";
    else if (r.request.stop && hasStopString(r.tokens, r.request.stop)) {
      r.finishReason = "stop-string";
    } else if (r.tokens.length === r.request.maxTokens) r.finishReason = "length";
    try {
      r.request.onToken?.(token, logprob, index);
    } catch (error) {
      r.failure = { error };
    }
  }

  function outcome(r: Row): SequenceOutcome {
    if (r.failure !== null) {
      return Object.freeze({ kind: "failed", sequence: r.sequence, error: r.failure.error });
    }
    const row: GeneratedRow = Object.freeze({
      tokens: Object.freeze(r.tokens),
      logprobs: Object.freeze(r.logprobs),
      finishReason: r.finishReason!,
    });
    return Object.freeze({ kind: "finished", sequence: r.sequence, row });
  }

  /**
   * Prefills the newcomers (each distinct prompt once) and picks their first tokens. With a host
   * cache, prompts of unlike lengths prefill apart (`lengthBuckets`), each padded only to the
   * longest of its own bucket, since the splice copies any number of caches; a device cache
   * joins one prefill's cache.
   */
  async function admit(newcomers: readonly Row[]) {
    const prompts = newcomers.map((r) => r.request.prompt);
    const shared = sharePrompts
      ? distinctPrompts(prompts)
      : { distinct: prompts, rowOf: prompts.map((_, i) => i) };
    const buckets = sessions.kind === "host-cache"
      ? lengthBuckets(shared.distinct)
      : [shared.distinct.map((_, i) => i)];
    const caches: Cache[] = [];
    const widths: number[] = [];
    // Where each distinct prompt's cache row and logits are.
    const place: { part: number; row: number; logits: Float32Array }[] = [];
    try {
      for (const members of buckets) {
        const rows = members.length;
        const joinWidth = Math.max(...members.map((d) => shared.distinct[d].length));
        const tokens = new Int32Array(rows * joinWidth).fill(pad);
        const mask = new Float32Array(rows * joinWidth);
        members.forEach((d, r) => {
          const p = shared.distinct[d];
          tokens.set(p, (r + 1) * joinWidth - p.length);
          mask.fill(1, (r + 1) * joinWidth - p.length, (r + 1) * joinWidth);
        });
        const result = await sessions.prefill.run({
          ...params,
          [MODEL_IO.tokens]: hostTensor("int32", [rows, joinWidth], tokens),
          [MODEL_IO.attentionMask]: hostTensor("float32", [rows, joinWidth], mask),
        });
        const part = caches.length;
        caches.push(
          sessions.kind === "host-cache"
            ? HostKvCache.fromPrefill(spec, result.host)
            : takeCache(result.device, layers),
        );
        widths.push(joinWidth);
        const logits = result.host[MODEL_IO.logits].data as Float32Array;
        members.forEach((d, row) => {
          place[d] = { part, row, logits: logits.subarray(row * vocab, (row + 1) * vocab) };
        });
      }
    } catch (error) {
      caches.forEach(disposeCache);
      throw error;
    }
    newcomers.forEach((r, i) => pick(r, place[shared.rowOf[i]].logits));
    const from = newcomers.map((_, i) => place[shared.rowOf[i]]);
    return { caches, widths, from, newcomers };
  }

  /**
   * Rebuilds the cache for the next decode: finished rows leave, `join`'s unfinished newcomers
   * are appended, every row left-padded to the longest and leading all-padding columns trimmed.
   * Without newcomers, finished rows leave once they are a quarter of the batch (a splice copies
   * the whole cache, about what a decode step costs) or when trimming would drop a quarter of
   * the columns. The rules read only tokens, never timing.
   */
  async function splice(join: Awaited<ReturnType<typeof admit>> | null) {
    const kept = batch.filter((r) => !ended(r));
    const joining = join === null
      ? []
      : join.newcomers.flatMap((r, i) => ended(r) ? [] : [{ row: r, from: join.from[i] }]);
    if (kept.length + joining.length === 0) {
      join?.caches.forEach(disposeCache);
      dropCache();
      return;
    }
    if (kept.length === 0 && cache !== null) {
      // Every running row ended (an abort): the newcomers start a fresh cache.
      disposeCache(cache);
      cache = null;
    }
    const target = Math.max(
      ...kept.map(pastLength),
      ...joining.map((j) => j.row.request.prompt.length),
    );
    const leaving = batch.length - kept.length;
    if (join === null) {
      const leave = dropFinished && leaving * 4 >= batch.length;
      const trim = dropFinished && (width - target) * 4 >= width;
      if (!leave && !trim) return;
    }
    const keptRows = kept.map((r) => batch.indexOf(r));
    let next: Cache;
    if (sessions.kind === "host-cache") {
      const parts: { cache: HostKvCache; rows: number[] }[] = [];
      if (cache !== null) parts.push({ cache: cache as HostKvCache, rows: keptRows });
      // The newcomers in admission order, one part per run of rows from one prefill.
      for (const { from } of joining) {
        const source = join!.caches[from.part] as HostKvCache;
        const last = parts.at(-1);
        if (last?.cache === source) last.rows.push(from.row);
        else parts.push({ cache: source, rows: [from.row] });
      }
      // Room for every decode until all these rows end: each adds one column.
      const room = Math.max(
        ...[...kept, ...joining.map((j) => j.row)].map((r) =>
          r.request.maxTokens - r.tokens.length
        ),
      );
      next = HostKvCache.splice(spec, parts, target, room);
    } else {
      next = await spliceDevice(
        sessions,
        layers,
        cache === null ? null : { cache: cache as DeviceCache, width, rows: keptRows },
        joining.length === 0 ? null : {
          cache: join!.caches[0] as DeviceCache,
          width: join!.widths[0],
          rows: joining.map((j) => j.from.row),
        },
        target,
      );
    }
    if (next !== cache) disposeCache(cache);
    join?.caches.forEach((c) => c !== next && disposeCache(c));
    cache = next;
    batch = [...kept, ...joining.map((j) => j.row)];
    width = target;
  }

  async function decodeStep(): Promise<void> {
    const rows = batch.length;
    const next = Int32Array.from(batch, (r) => ended(r) ? pad : r.tokens.at(-1)!);
    const host = sessions.kind === "host-cache" ? cache as HostKvCache : null;
    // Row b's real positions are its last pastLength columns before `width`, then (the mask's
    // last column) the token fed now; a host cache's columns from `width` on are room, masked. A
    // finished row still in the batch keeps a stale span; its outputs are never read.
    const span = (host?.capacity ?? width) + 1;
    const mask = new Float32Array(rows * span);
    batch.forEach((r, b) => {
      mask.fill(1, b * span + width - Math.min(pastLength(r), width), b * span + width);
      mask[(b + 1) * span - 1] = 1;
    });
    const result = await sessions.decode.run({
      ...params,
      ...(host?.feeds() ??
        cacheFeeds(cache as DeviceCache, layers, MODEL_IO.pastKey, MODEL_IO.pastValue)),
      [MODEL_IO.tokens]: hostTensor("int32", [rows, 1], next),
      [MODEL_IO.attentionMask]: hostTensor("float32", [rows, span], mask),
    });
    if (host !== null) {
      host.append(result.host);
    } else {
      const grown = takeCache(result.device, layers);
      disposeCache(cache);
      cache = grown;
    }
    width++;
    const logits = result.host[MODEL_IO.logits].data as Float32Array;
    batch.forEach((r, b) => {
      if (!ended(r)) pick(r, logits.subarray(b * vocab, (b + 1) * vocab));
    });
  }

  async function runStep(): Promise<readonly SequenceOutcome[]> {
    const running = batch.filter((r) => !ended(r));
    for (const r of [...queue, ...batch]) {
      if (!ended(r) && r.request.signal?.aborted) r.failure = { error: r.request.signal.reason };
    }
    const endedInQueue = queue.filter(ended);
    queue = queue.filter((r) => !ended(r));
    const room = Math.max(0, maxRows - running.length);
    const admitNow = !doubling || running.length === 0 ||
      Math.min(queue.length, room) >= running.length;
    const newcomers = admitNow ? queue.splice(0, room) : [];
    admitting = newcomers;
    // The newcomers' prefill caches until the splice takes them over (or frees them).
    let joinCaches: readonly Cache[] = [];
    try {
      const join = newcomers.length > 0 ? await admit(newcomers) : null;
      joinCaches = join?.caches ?? [];
      await splice(join);
      joinCaches = [];
      if (batch.some((r) => !ended(r))) await decodeStep();
    } catch (error) {
      // A failed run leaves the cache unknown: every row in it or joining it fails.
      for (const r of [...batch, ...newcomers]) if (!ended(r)) r.failure = { error };
      joinCaches.forEach(disposeCache);
      dropCache();
    }
    admitting = [];
    const done = [...endedInQueue, ...running, ...newcomers].filter(ended);
    const outcomes = done.map(outcome);
    outcomes.forEach((o, i) => done[i].settle(o));
    if (batch.every(ended) && cache !== null) {
      // Nothing left to decode: free the cache now rather than at the next admission.
      dropCache();
    }
    return outcomes;
  }

  function step(): Promise<readonly SequenceOutcome[]> {
    if (closed) return Promise.reject(new ModelError("step", "the batch is closed"));
    if (stepping !== null) {
      return Promise.reject(new ModelError("step", "a step is running; await it first"));
    }
    const current = runStep().finally(() => stepping = null);
    stepping = current;
    return current;
  }

  async function pump() {
    if (pumping) return;
    pumping = true;
    try {
      while (!closed && queue.length + batch.filter((r) => !ended(r)).length > 0) {
        await step();
        // Let arrivals (HTTP handlers) run between steps.
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    } finally {
      pumping = false;
    }
  }

  return Object.freeze({
    kind: "continuous-batch",
    submit,
    step: () =>
      auto
        ? Promise.reject(new ModelError("step", "an auto-stepping batch steps by itself"))
        : step(),
    get running() {
      return [...batch, ...admitting].filter((r) => !ended(r)).length;
    },
    get queued() {
      return queue.length;
    },
    get width() {
      return width;
    },
    close: async () => {
      closed = true;
      await stepping?.catch(() => {});
      const error = new ModelError("batch", "closed before the sequence ended");
      for (const r of [...queue, ...batch]) {
        if (!ended(r)) {
          r.failure = { error };
          r.settle(outcome(r));
        }
      }
      queue = [];
      dropCache();
    },
  });
}

/** Rows of a device cache of `width` columns to splice. */
interface DeviceCacheRows {
  readonly cache: DeviceCache;
  readonly width: number;
  readonly rows: readonly number[];
}

/**
 * The device splice: `running`'s rows then `join`'s (at least one of them), right-aligned to
 * `target` columns by the splice graphs; the source itself when nothing moves.
 */
async function spliceDevice(
  sessions: DeviceCacheSessions,
  layers: number,
  running: DeviceCacheRows | null,
  join: DeviceCacheRows | null,
  target: number,
): Promise<DeviceCache> {
  // Output column c copies source column c - (target - sourceWidth), clamped to 0: padding on
  // the left when the source is narrower, leading columns dropped when it is wider.
  const columns = (sourceWidth: number) =>
    Int32Array.from({ length: target }, (_, c) => Math.max(0, c - (target - sourceWidth)));
  const index = (xs: ArrayLike<number>) => hostTensor("int32", [xs.length], Int32Array.from(xs));
  if (running !== null && join !== null) {
    const result = await sessions.cacheJoin.run({
      ...cacheFeeds(running.cache, layers, MODEL_IO.pastKey, MODEL_IO.pastValue),
      ...cacheFeeds(join.cache, layers, MODEL_IO.joinKey, MODEL_IO.joinValue),
      [MODEL_IO.cacheRows]: index(running.rows),
      [MODEL_IO.cacheColumns]: index(columns(running.width)),
      [MODEL_IO.joinRows]: index(join.rows),
      [MODEL_IO.joinColumns]: index(columns(join.width)),
    });
    return takeCache(result.device, layers);
  }
  const { cache: source, width: sourceWidth, rows } = (running ?? join)!;
  const identity = rows.length === cacheRowCount(source) && rows.every((from, i) => from === i);
  if (identity && sourceWidth === target) return source;
  const feeds = {
    ...cacheFeeds(source, layers, MODEL_IO.pastKey, MODEL_IO.pastValue),
    [MODEL_IO.cacheRows]: index(rows),
  };
  const result = sourceWidth === target
    ? await sessions.cacheRows.run(feeds)
    : await sessions.cacheSelect.run({
      ...feeds,
      [MODEL_IO.cacheColumns]: index(columns(sourceWidth)),
    });
  return takeCache(result.device, layers);
}

function cacheRowCount(cache: DeviceCache): number {
  return cache[MODEL_IO.pastKey(0)].dims[0];
}

/**
 * Indices of `prompts` in groups to prefill together: longest first, a prompt joining the current
 * group while it is at least three quarters of the group's longest (so no row is padded by more
 * than a third of its length); ties keep submission order. A function of the lengths alone.
 *
 * @example
 * ```ts
 * import { lengthBuckets } from "./continuous-batch.ts";
 *
 * lengthBuckets([[1, 2, 3, 4], [1], [5, 6, 7]]); // [[0, 2], [1]]
 * ```
 */
export function lengthBuckets(prompts: readonly (readonly number[])[]): number[][] {
  const order = prompts.map((_, i) => i).sort((a, b) =>
    prompts[b].length - prompts[a].length || a - b
  );
  const buckets: number[][] = [];
  for (const i of order) {
    const current = buckets.at(-1);
    if (current && prompts[i].length * 4 >= prompts[current[0]].length * 3) current.push(i);
    else buckets.push([i]);
  }
  return buckets;
}

/** For each prompt, the index of its first occurrence among the distinct prompts. */
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

/** A run's present keys/values as the next run's past. */
function takeCache(device: Readonly<Record<string, DeviceTensor>>, layers: number): DeviceCache {
  const next: DeviceCache = {};
  for (let i = 0; i < layers; i++) {
    next[MODEL_IO.pastKey(i)] = device[MODEL_IO.presentKey(i)];
    next[MODEL_IO.pastValue(i)] = device[MODEL_IO.presentValue(i)];
  }
  return next;
}

/** Frees a device cache's tensors (a host cache is garbage collected). */
function disposeCache(cache: Cache | null) {
  if (cache !== null && !(cache instanceof HostKvCache)) {
    Object.values(cache).forEach((t) => t.dispose());
  }
}

function cacheFeeds(
  cache: DeviceCache,
  layers: number,
  keyName: (layer: number) => string,
  valueName: (layer: number) => string,
): Record<string, Feed> {
  const feeds: Record<string, Feed> = {};
  for (let i = 0; i < layers; i++) {
    feeds[keyName(i)] = cache[MODEL_IO.pastKey(i)];
    feeds[valueName(i)] = cache[MODEL_IO.pastValue(i)];
  }
  return feeds;
}

/**
 * log softmax(logits / temperature)[token] in float64 (max-shifted log-sum-exp; the temperature
 * is the logprob one, > 0). Temperature 1 divides exactly: the untempered value, bit for bit.
 *
 * @example
 * ```ts
 * import { tokenLogprob } from "./continuous-batch.ts";
 *
 * tokenLogprob(new Float32Array([0, 0]), 1, 1); // -Math.LN2
 * tokenLogprob(new Float32Array([0, 1]), 1, 0.5); // -log(1 + e^-2) ≈ -0.1269
 * ```
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
