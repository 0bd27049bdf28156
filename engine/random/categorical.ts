/**
 * Categorical sampling by inverse CDF over one keyed uniform.
 *
 * Why inverse CDF and not Gumbel-max: Gumbel-max needs one uniform per category (a full
 * vocabulary of Philox blocks per token), inverse CDF needs one per sampled token, and top-p
 * only changes which categories the walk covers. The cumulative sum runs in vocabulary order in
 * float64 (top-p chooses its set by probability, ties by lower index, and the walk stays in
 * vocabulary order), so the result is bit-stable for given inputs.
 */
import { RandomArgumentError } from "./errors.ts";
import { type RandomStream, uniform53 } from "./keyed.ts";

/** Temperature and nucleus settings; temperature 0 means greedy (argmax, lowest index on ties). */
export interface SamplingOptions {
  readonly temperature: number;
  readonly topP: number;
}

/** A sparse distribution: categories (in walk order) and their probabilities (summing to 1). */
export interface SamplingDistribution {
  readonly kind: "sampling-distribution";
  readonly categories: Int32Array;
  readonly probabilities: Float64Array;
}

function checkOptions({ temperature, topP }: SamplingOptions): void {
  if (!Number.isFinite(temperature) || temperature < 0) {
    throw new RandomArgumentError("temperature", temperature, "a finite number >= 0");
  }
  if (!(topP > 0 && topP <= 1)) throw new RandomArgumentError("topP", topP, "a number in (0, 1]");
}

/** Index of the largest logit, lowest index on ties; rejects NaN, +Infinity and all -Infinity. */
function argmax(logits: ArrayLike<number>): number {
  let best = -1;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i];
    if (Number.isNaN(x) || x === Infinity) {
      throw new RandomArgumentError(`logits[${i}]`, x, "a finite number or -Infinity");
    }
    if (x !== -Infinity && (best < 0 || x > logits[best])) best = i;
  }
  if (best < 0) {
    throw new RandomArgumentError("logits", `[${logits.length} x -Infinity]`, "a finite logit");
  }
  return best;
}

/** Unnormalized softmax weights exp((x - max) / T): the largest is exactly 1. */
function softmaxWeights(logits: ArrayLike<number>, top: number, temperature: number) {
  const weights = new Float64Array(logits.length);
  const max = logits[top];
  let total = 0;
  for (let i = 0; i < logits.length; i++) {
    weights[i] = Math.exp((logits[i] - max) / temperature);
    total += weights[i];
  }
  return { weights, total };
}

/**
 * The top-p set: the shortest prefix of the tokens ordered by weight descending (index ascending
 * on ties) whose mass, summed in that order, reaches topP * total; returned in vocabulary order,
 * which is the order sampling walks.
 *
 * Only tokens at or above a threshold t whose mass already reaches the target are sorted (every
 * lighter token sorts after all of them, so it cannot be in the prefix), and only their weights,
 * natively: the prefix length gives the cutoff weight. The 1e-9 relative margin on the threshold
 * covers the rounding difference between summing in index order and in sorted order, so the
 * result equals a full sort's.
 */
function nucleus(weights: Float64Array, total: number, topP: number): Int32Array {
  const need = topP * total;
  let threshold = 0;
  for (let t = 0.5; t > 1e-300; t /= 16) {
    let mass = 0;
    for (let i = 0; i < weights.length; i++) if (weights[i] >= t) mass += weights[i];
    if (mass >= need * (1 + 1e-9)) {
      threshold = t;
      break;
    }
  }
  const candidate = (w: number) => w >= threshold && w > 0;
  let count = 0;
  for (let i = 0; i < weights.length; i++) if (candidate(weights[i])) count++;
  const sorted = new Float64Array(count);
  for (let i = 0, k = 0; i < weights.length; i++) {
    if (candidate(weights[i])) sorted[k++] = weights[i];
  }
  sorted.sort();
  let mass = 0;
  let end = sorted.length;
  while (end > 0 && (end === sorted.length || mass < need)) mass += sorted[--end];
  const cutoff = sorted[end];
  // Tokens at the cutoff weight are taken by ascending index, as many as the prefix holds.
  let atCutoff = 0;
  for (let j = end; j < sorted.length && sorted[j] === cutoff; j++) atCutoff++;
  const kept: number[] = [];
  for (let i = 0; i < weights.length; i++) {
    if (weights[i] > cutoff || (weights[i] === cutoff && atCutoff-- > 0)) kept.push(i);
  }
  return Int32Array.from(kept);
}

/** What sampling walks: a greedy choice, or weights in walk order (order null: vocabulary). */
type Walk =
  | { readonly kind: "greedy"; readonly token: number }
  | {
    readonly kind: "weights";
    readonly weights: Float64Array;
    readonly total: number;
    readonly order: Int32Array | null;
  };

function walk(logits: ArrayLike<number>, options: SamplingOptions): Walk {
  checkOptions(options);
  const top = argmax(logits);
  if (options.temperature === 0) return { kind: "greedy", token: top };
  const { weights, total } = softmaxWeights(logits, top, options.temperature);
  if (options.topP === 1) return { kind: "weights", weights, total, order: null };
  const order = nucleus(weights, total, options.topP);
  const kept = Float64Array.from(order, (i) => weights[i]);
  let mass = 0;
  for (const w of kept) mass += w;
  return { kind: "weights", weights: kept, total: mass, order };
}

/**
 * The distribution sampling draws from, in walk (vocabulary) order: softmax(logits / temperature),
 * restricted to the smallest probability-descending prefix whose mass reaches topP (at least one
 * category), renormalized. Temperature 0 gives the argmax with probability 1. Zero-probability
 * categories are left out.
 *
 * @example
 * ```ts
 * samplingDistribution([2, 1, 0], { temperature: 1, topP: 0.9 }).categories; // Int32Array [0, 1]
 * ```
 */
export function samplingDistribution(
  logits: ArrayLike<number>,
  options: SamplingOptions,
): SamplingDistribution {
  const w = walk(logits, options);
  if (w.kind === "greedy") {
    return Object.freeze({
      kind: "sampling-distribution" as const,
      categories: Int32Array.of(w.token),
      probabilities: Float64Array.of(1),
    });
  }
  const categories: number[] = [];
  const probabilities: number[] = [];
  w.weights.forEach((weight, i) => {
    if (weight > 0) {
      categories.push(w.order ? w.order[i] : i);
      probabilities.push(weight / w.total);
    }
  });
  return Object.freeze({
    kind: "sampling-distribution" as const,
    categories: Int32Array.from(categories),
    probabilities: Float64Array.from(probabilities),
  });
}

/**
 * Inverse-CDF draw `index` from non-negative weights (need not sum to 1): returns the position
 * whose cumulative interval contains u * total, walking positions in order.
 *
 * @example
 * ```ts
 * import { randomStream, sampleCategorical } from "./mod.ts";
 * sampleCategorical(randomStream({ seed: 1, purpose: "route" }), 0, [0.2, 0.8]); // 0 or 1
 * ```
 */
export function sampleCategorical(
  stream: RandomStream,
  index: number,
  weights: ArrayLike<number>,
): number {
  let total = 0;
  let last = -1;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i];
    if (!Number.isFinite(w) || w < 0) {
      throw new RandomArgumentError(`weights[${i}]`, w, "a finite number >= 0");
    }
    total += w;
    if (w > 0) last = i;
  }
  if (last < 0) {
    throw new RandomArgumentError("weights", "all zero", "at least one positive weight");
  }
  const target = uniform53(stream, index) * total;
  let cumulative = 0;
  for (let i = 0; i < weights.length; i++) {
    cumulative += weights[i];
    if (target < cumulative) return i;
  }
  // Rounding can leave target a hair above the last partial sum: it belongs to the last category.
  return last;
}

/**
 * Samples a token id from logits with temperature and top-p, using draw `index` (use the token
 * position): the inverse CDF over the softmax weights (of the nucleus, under top-p) in vocabulary
 * order. Greedy (temperature 0) consumes no randomness.
 *
 * @example
 * ```ts
 * import { randomStream, sampleLogits } from "./mod.ts";
 * declare const logits: Float32Array; // the model's next-token logits
 * const s = randomStream({ seed: 1, purpose: "sample-token", step: 0, agent: "solver", sample: 2 });
 * sampleLogits(s, 17, logits, { temperature: 0.7, topP: 0.95 });
 * ```
 */
export function sampleLogits(
  stream: RandomStream,
  index: number,
  logits: ArrayLike<number>,
  options: SamplingOptions,
): number {
  const w = walk(logits, options);
  if (w.kind === "greedy") return w.token;
  const position = sampleCategorical(stream, index, w.weights);
  return w.order ? w.order[position] : position;
}
