/**
 * How the server picks and scores tokens. Every choice samples from its own keyed stream
 * (docs/ARCHITECTURE.md, "Determinism"): `randomStream({ seed, purpose: "serve:sample-token",
 * sample: choice })`, draw index = the token's position in the completion. So a request with a
 * `seed` gets the same uniforms whatever else shares its batch or arrives before it; a request
 * without one gets a fresh random seed, drawn once. A client that must reproduce the trainer's
 * own draws (the rollout backend) names their coordinates in `polyrl_draw` (purpose, step, wg,
 * agent, prompt, sample, turn): choice j then samples from exactly the stream the in-process
 * speaker would use for that turn, with `sample` + j. Logprobs are of softmax(logits / T) at the
 * request's temperature (T = 0, greedy: T = 1), the number the trainer recomputes for the token
 * (adapters/model/generate.ts, `tokenLogprob`).
 */
import { tokenLogprob } from "../../adapters/model/mod.ts";
import { logprobTemperature } from "../../adapters/onnx/train-step/mod.ts";
import { type DrawCoordinates, randomStream, sampleLogits } from "../random/mod.ts";

/** The purpose of the server's token draws: with `seed` and `sample`, their coordinates. */
export const SERVE_SAMPLE_PURPOSE = "serve:sample-token";

/** A token's logprob, and the most likely tokens' when asked for. */
export interface ScoredToken {
  readonly token: number;
  readonly logprob: number;
  /** The `k` most likely tokens, most likely first (ties: lower id); empty when k = 0. */
  readonly top: readonly { readonly token: number; readonly logprob: number }[];
}

/** Where a request's draws sit, when it names them (`polyrl_draw`): all but the seed. */
export type DrawPlace = Omit<DrawCoordinates, "seed">;

/**
 * The draw coordinates of choice `choice` of a request: the server's own
 * `(seed, "serve:sample-token", sample = choice)`, or the request's `place` with its sample
 * advanced by `choice`.
 *
 * @example
 * ```ts
 * import { choiceCoordinates } from "./sampling.ts";
 *
 * choiceCoordinates(42, null, 3); // { seed: 42, purpose: "serve:sample-token", sample: 3 }
 * ```
 */
export function choiceCoordinates(
  seed: number,
  place: DrawPlace | null,
  choice: number,
): DrawCoordinates {
  if (place === null) return { seed, purpose: SERVE_SAMPLE_PURPOSE, sample: choice };
  return { ...place, seed, sample: (place.sample ?? 0) + choice };
}

/**
 * The token chooser of a choice: temperature / top-p sampling over the keyed draws of
 * `coordinates`, draw index = token position.
 *
 * @example
 * ```ts
 * import { choiceCoordinates, keyedChooser } from "./sampling.ts";
 *
 * const choose = keyedChooser(choiceCoordinates(42, null, 0), { temperature: 0.7, topP: 0.95 });
 * const token = choose(new Float32Array([0, 1, 2]), 0); // the first token of choice 0
 * ```
 */
export function keyedChooser(
  coordinates: DrawCoordinates,
  options: { temperature: number; topP: number },
): (logits: Float32Array, index: number) => number {
  const stream = randomStream(coordinates);
  return (logits, index) => sampleLogits(stream, index, logits, options);
}

/**
 * `token`'s logprob under softmax(logits / T) and the `k` best tokens' (T = 0 scores at 1).
 *
 * @example
 * ```ts
 * import { scoreToken } from "./sampling.ts";
 *
 * scoreToken(new Float32Array([0, 1]), 1, 0, 1).logprob; // log(e / (1 + e)) = -0.3133
 * ```
 */
export function scoreToken(
  logits: ArrayLike<number>,
  token: number,
  temperature: number,
  k: number,
): ScoredToken {
  const t = logprobTemperature(temperature);
  const logprob = tokenLogprob(logits, token, t);
  if (k === 0) return { token, logprob, top: [] };
  // log p(i) = logprob + (logits[i] - logits[token]) / T: one log-sum-exp serves every token.
  const best: number[] = [];
  for (let i = 0; i < logits.length; i++) {
    if (best.length < k || logits[i] > logits[best[best.length - 1]]) {
      let at = best.length;
      while (at > 0 && logits[i] > logits[best[at - 1]]) at--;
      best.splice(at, 0, i);
      if (best.length > k) best.pop();
    }
  }
  const top = best.map((i) => ({ token: i, logprob: logprob + (logits[i] - logits[token]) / t }));
  return { token, logprob, top };
}

/**
 * A seed for a request that gave none: 53 random bits, so its draws are keyed like any other.
 *
 * @example
 * ```ts
 * import { randomSeed } from "./sampling.ts";
 *
 * randomSeed(); // 6150926301232891, a different one each call
 * ```
 */
export function randomSeed(): number {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return (words[0] >>> 11) * 2 ** 32 + words[1];
}
