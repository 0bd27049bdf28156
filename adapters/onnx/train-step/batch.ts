/**
 * Host-side batches for the train step: validation, whole-batch loss denominators, splitting
 * into micro-batches along the sequence axis 0, and conversion to graph feeds (dropout masks
 * included).
 */
import { type HostTensor, hostTensor, scalar } from "../runtime/mod.ts";
import { type DropoutMaskSpec, IO, type LossAggregation, TrainStepError } from "./spec.ts";

/**
 * One batch, row-major [batch, seq]. Position t of every per-token array refers to the prediction
 * made at position t of the token `targets[t]` (usually tokens shifted left by one).
 */
export interface PolicyBatch {
  readonly batch: number;
  readonly seq: number;
  readonly tokens: Int32Array;
  readonly targets: Int32Array;
  readonly attentionMask: Float32Array;
  readonly lossMask: Float32Array;
  readonly advantages: Float32Array;
  readonly oldLogprobs: Float32Array;
  /** Needed when the step has a KL estimator. */
  readonly refLogprobs?: Float32Array;
}

const perToken = [
  "tokens",
  "targets",
  "attentionMask",
  "lossMask",
  "advantages",
  "oldLogprobs",
  "refLogprobs",
] as const;

/** Throws unless every per-token array holds batch * seq values. */
export function checkBatch(b: PolicyBatch): void {
  const n = b.batch * b.seq;
  for (const key of perToken) {
    const a = b[key];
    if (a && a.length !== n) {
      throw new TrainStepError(
        `batch.${key} holds ${a.length} values; [batch=${b.batch}, seq=${b.seq}] needs ${n}`,
      );
    }
  }
}

/** Loss tokens and sequences with at least one loss token. */
export function countLossTokens(b: PolicyBatch): { tokens: number; sequences: number } {
  let tokens = 0;
  let sequences = 0;
  for (let i = 0; i < b.batch; i++) {
    let n = 0;
    for (let t = 0; t < b.seq; t++) n += b.lossMask[i * b.seq + t];
    tokens += n;
    if (n > 0) sequences += 1;
  }
  return { tokens, sequences };
}

/**
 * The whole-batch denominator of each aggregation: loss tokens (token-mean), sequences
 * (seq-mean-token-sum, seq-mean-token-mean), the constant (seq-mean-token-sum-norm), or
 * sequences x constant (seq-sum-const). At least 1, so an empty mask gives loss 0 rather than NaN.
 *
 * @example
 * ```ts
 * import { lossDenominator, type PolicyBatch } from "./batch.ts";
 *
 * declare const batch: PolicyBatch;
 * lossDenominator("seq-sum-const", batch, 512);
 * ```
 */
export function lossDenominator(
  aggregation: LossAggregation,
  b: PolicyBatch,
  constant?: number,
): number {
  const { tokens, sequences } = countLossTokens(b);
  const checked = () => {
    if (!(constant !== undefined && constant > 0)) {
      throw new TrainStepError(
        `${aggregation} needs aggregationConstant > 0 (e.g. the max response length), got ` +
          `${constant}`,
      );
    }
    return constant;
  };
  switch (aggregation) {
    case "token-mean":
      return Math.max(tokens, 1);
    case "seq-mean-token-sum":
    case "seq-mean-token-mean":
      return Math.max(sequences, 1);
    case "seq-mean-token-sum-norm":
      return checked();
    case "seq-sum-const":
      return Math.max(sequences, 1) * checked();
  }
}

/**
 * Each row's denominator when the loss is aggregated per micro-batch of `size` consecutive rows,
 * as veRL's actor does: its micro-batch's `lossDenominator` times the gradient accumulation
 * steps, max(1, rows // size). veRL divides each micro-batch's loss by ppo_mini_batch_size //
 * ppo_micro_batch_size_per_gpu (dp_actor.py lines 358, 428), the floor even when the last
 * micro-batch is short, and so does this.
 *
 * @example
 * ```ts
 * import { type PolicyBatch, rowDenominators } from "./batch.ts";
 *
 * declare const batch: PolicyBatch;
 * rowDenominators("token-mean", batch, 4); // [T0*G, T0*G, T0*G, T0*G, T1*G, ...]
 * ```
 */
export function rowDenominators(
  aggregation: LossAggregation,
  b: PolicyBatch,
  size: number,
  constant?: number,
): Float32Array {
  const accumulation = Math.max(1, Math.floor(b.batch / size));
  const out = new Float32Array(b.batch);
  splitBatch(b, size).forEach((part, k) =>
    out.fill(
      lossDenominator(aggregation, part, constant) * accumulation,
      k * size,
      k * size + part.batch,
    )
  );
  return out;
}

/**
 * Splits a batch into micro-batches of at most `size` sequences (the last may be smaller).
 *
 * @example
 * ```ts
 * import { type PolicyBatch, splitBatch } from "./batch.ts";
 *
 * declare const batch: PolicyBatch;
 * splitBatch(batch, 4).length; // ceil(batch.batch / 4)
 * ```
 */
export function splitBatch(b: PolicyBatch, size: number): PolicyBatch[] {
  if (!Number.isInteger(size) || size < 1) {
    throw new TrainStepError(`micro-batch size must be a whole number >= 1, got ${size}`);
  }
  const parts: PolicyBatch[] = [];
  for (let start = 0; start < b.batch; start += size) {
    parts.push(batchRows(b, start, Math.min(size, b.batch - start)));
  }
  return parts;
}

/**
 * Rows `start .. start + rows - 1` of a batch, as views of its arrays (no copy).
 *
 * @example
 * ```ts
 * import { batchRows, type PolicyBatch } from "./batch.ts";
 *
 * declare const batch: PolicyBatch;
 * batchRows(batch, 2, 3).batch; // 3
 * ```
 */
export function batchRows(b: PolicyBatch, start: number, rows: number): PolicyBatch {
  if (!(Number.isInteger(start) && Number.isInteger(rows) && start >= 0 && rows >= 1)) {
    throw new TrainStepError(`rows ${start}..${start + rows - 1} are not a row range`);
  }
  if (start + rows > b.batch) {
    throw new TrainStepError(
      `rows ${start}..${start + rows - 1} are outside the batch of ${b.batch}`,
    );
  }
  const cut = <T extends Int32Array | Float32Array>(a: T) =>
    a.subarray(start * b.seq, (start + rows) * b.seq) as T;
  return {
    batch: rows,
    seq: b.seq,
    tokens: cut(b.tokens),
    targets: cut(b.targets),
    attentionMask: cut(b.attentionMask),
    lossMask: cut(b.lossMask),
    advantages: cut(b.advantages),
    oldLogprobs: cut(b.oldLogprobs),
    refLogprobs: b.refLogprobs && cut(b.refLogprobs),
  };
}

/**
 * Graph feeds for one (micro-)batch, whose first row is row `first` of the whole batch; the
 * denominators are those of the whole batch (`rowDenominators` with a loss micro-batch).
 *
 * @example
 * ```ts
 * import { batchFeeds, type PolicyBatch } from "./batch.ts";
 *
 * declare const micro: PolicyBatch; // one micro-batch of the step's batch
 * batchFeeds(micro, { lossDenominator: 120, tokenCount: 120 }, true);
 * ```
 */
export function batchFeeds(
  b: PolicyBatch,
  whole: {
    readonly lossDenominator: number;
    readonly tokenCount: number;
    readonly rowDenominators?: Float32Array;
  },
  withReference: boolean,
  first = 0,
): Record<string, HostTensor> {
  const dims = [b.batch, b.seq];
  const feeds: Record<string, HostTensor> = {
    [IO.tokens]: hostTensor("int32", dims, b.tokens),
    [IO.targets]: hostTensor("int32", dims, b.targets),
    [IO.attentionMask]: hostTensor("float32", dims, b.attentionMask),
    [IO.lossMask]: hostTensor("float32", dims, b.lossMask),
    [IO.advantages]: hostTensor("float32", dims, b.advantages),
    [IO.oldLogprobs]: hostTensor("float32", dims, b.oldLogprobs),
    [IO.lossDenominator]: scalar(whole.lossDenominator),
    [IO.tokenCount]: scalar(Math.max(whole.tokenCount, 1)),
  };
  if (whole.rowDenominators) {
    feeds[IO.rowDenominators] = hostTensor(
      "float32",
      [b.batch],
      whole.rowDenominators.subarray(first, first + b.batch),
    );
  }
  if (withReference) {
    if (!b.refLogprobs) {
      throw new TrainStepError("the step has a KL estimator, so batch.refLogprobs is required");
    }
    feeds[IO.refLogprobs] = hostTensor("float32", dims, b.refLogprobs);
  }
  return feeds;
}

/**
 * Fills dropout mask `name` of one batch row: `out` is float32 [seq, width] and `row` the row's
 * index in the batch given to the runner, not in its micro-batch, so the split never changes a
 * mask. Each value multiplies the masked input: 0 where dropped, 1 / (1 - p) where kept (inverted
 * dropout, as torch.nn.Dropout scales).
 */
export type DropoutMaskFill = (name: string, row: number, out: Float32Array) => void;

/**
 * Mask feeds [rows, seq, width] of the (micro-)batch `part`, whose first row is row `first` of
 * the whole batch. Built per micro-batch: a mask is as large as the activations it drops.
 *
 * @example
 * ```ts
 * import { type DropoutMaskFill, dropoutMaskFeeds, type PolicyBatch } from "./batch.ts";
 * import type { TrainStepConfig } from "./spec.ts";
 *
 * declare const config: TrainStepConfig;
 * declare const fill: DropoutMaskFill;
 * declare const micro: PolicyBatch; // the micro-batch starting at row 4
 * dropoutMaskFeeds(config.dropoutMasks ?? [], fill, micro, 4);
 * ```
 */
export function dropoutMaskFeeds(
  specs: readonly DropoutMaskSpec[],
  fill: DropoutMaskFill,
  part: PolicyBatch,
  first: number,
): Record<string, HostTensor> {
  const feeds: Record<string, HostTensor> = {};
  for (const { name, width } of specs) {
    const rowSize = part.seq * width;
    const data = new Float32Array(part.batch * rowSize);
    for (let r = 0; r < part.batch; r++) {
      fill(name, first + r, data.subarray(r * rowSize, (r + 1) * rowSize));
    }
    feeds[IO.dropoutMask(name)] = hostTensor("float32", [part.batch, part.seq, width], data);
  }
  return feeds;
}
