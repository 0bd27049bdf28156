/**
 * Turns workflow requests into model calls. Requests that arrive together (every episode of a
 * step runs concurrently, so each turn's requests do) are batched per worker group into one
 * generation. Every sampled token is drawn from the counter-based generator keyed by
 * (seed, phase, step, agent, prompt, sample, turn, token index), so the batching, and the order in
 * which episodes finish, never change a token.
 */
import { randomStream, sampleLogits } from "../random/mod.ts";
import type { Speak, TurnRequest } from "../workflows/mod.ts";
import type { GroupPolicy } from "./policy-pool.ts";

/** What the speaker needs of a policy: a trainer's worker group or a frozen evaluation model. */
export type SpeakingPolicy = Pick<GroupPolicy, "id" | "spec" | "tokenizer" | "generate">;

/** The token-level record of one agent turn, as the turn event stores it. */
export interface TurnRecord {
  readonly workerGroup: string;
  readonly promptTokens: Int32Array<ArrayBuffer>;
  readonly responseTokens: Int32Array<ArrayBuffer>;
  readonly logprobs: Float32Array<ArrayBuffer>;
  readonly finishReason: "stop" | "length";
}

/** Where an episode sits in the run; the coordinates of its draws. */
export interface EpisodeCoordinates {
  readonly phase: "rollout" | "eval";
  readonly step: number;
  readonly prompt: number;
  readonly sample: number;
}

/** Sampling settings of a config. */
export interface SpeakerSettings {
  readonly seed: number;
  readonly temperature: number;
  readonly topP: number;
  readonly maxTokens: number;
  readonly stop: readonly string[];
  /** Largest number of rows in one generation call. */
  readonly maxBatch: number;
}

interface Pending {
  readonly request: TurnRequest;
  readonly at: EpisodeCoordinates;
  readonly resolve: (output: { text: string; extra: TurnRecord }) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * Builds the speaker of a run.
 *
 * @example
 * const speaker = createSpeaker(pool.groups, config.agent_to_wg, settings);
 * const episode = await workflow.run(question, speaker.speakFor({ phase: "rollout", step, prompt, sample }));
 */
export function createSpeaker(
  groups: ReadonlyMap<string, SpeakingPolicy>,
  agentToWg: Readonly<Record<string, string>>,
  settings: SpeakerSettings,
) {
  let pending: Pending[] = [];
  let scheduled = false;

  async function generateFor(policy: SpeakingPolicy, rows: Pending[]): Promise<(() => void)[]> {
    const tokenizer = policy.tokenizer;
    const context = policy.spec.config.maxPositionEmbeddings - settings.maxTokens;
    const prompts = rows.map(({ request }) => {
      const ids = tokenizer.chatTemplate
        ? tokenizer.encodeChat([{ role: "user", content: request.prompt }])
        : tokenizer.encode(request.prompt);
      // Long refinement histories keep their most recent part: the model's window is finite.
      return ids.length > context ? ids.slice(ids.length - context) : ids;
    });
    const streams = rows.map(({ request, at }) =>
      randomStream({
        seed: settings.seed,
        purpose: `sample-token:${at.phase}`,
        step: at.step,
        agent: request.agent.id,
        prompt: at.prompt,
        sample: at.sample,
        turn: request.turn,
      })
    );
    const options = { temperature: settings.temperature, topP: settings.topP };
    // The recorded logprobs are of the distribution sampled from, softmax(logits / T).
    const generated = await policy.generate(prompts, {
      maxTokens: settings.maxTokens,
      temperature: settings.temperature,
      choose: (logits, row, index) => sampleLogits(streams[row], index, logits, options),
    });
    return generated.map((g, i) => {
      let tokens = g.tokens;
      let logprobs = g.logprobs;
      let text = tokenizer.decode(tokens, { skipSpecialTokens: true });
      let finishReason: "stop" | "length" = g.finishReason === "length" ? "length" : "stop";
      const cut = firstStop(text, settings.stop);
      if (cut !== null) {
        // Keep the tokens up to and including the one that completed the stop string.
        let n = 0;
        while (n < tokens.length && tokenizer.decode(tokens.slice(0, n + 1)).length < cut) n++;
        tokens = tokens.slice(0, n + 1);
        logprobs = logprobs.slice(0, n + 1);
        text = text.slice(0, cut);
        finishReason = "stop";
      }
      return () =>
        rows[i].resolve({
          text,
          extra: {
            workerGroup: policy.id,
            promptTokens: Int32Array.from(prompts[i]),
            responseTokens: Int32Array.from(tokens),
            logprobs: Float32Array.from(logprobs),
            finishReason,
          },
        });
    });
  }

  async function flush() {
    scheduled = false;
    const batch = pending;
    pending = [];
    const byGroup = new Map<string, Pending[]>();
    for (const p of batch) {
      const wg = agentToWg[p.request.agent.id];
      byGroup.set(wg, [...(byGroup.get(wg) ?? []), p]);
    }
    // Nobody hears back until every batch of this flush is done, so the next flush's requests
    // are always the same set whatever the timing of the native calls.
    const settle: (() => void)[] = [];
    for (const [wg, rows] of [...byGroup].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)) {
      const policy = groups.get(wg)!;
      for (let at = 0; at < rows.length; at += settings.maxBatch) {
        const chunk = rows.slice(at, at + settings.maxBatch);
        try {
          settle.push(...await generateFor(policy, chunk));
        } catch (err) {
          for (const p of chunk) settle.push(() => p.reject(err));
        }
      }
    }
    for (const s of settle) s();
  }

  return {
    /** The Speak function of one episode. */
    speakFor(at: EpisodeCoordinates): Speak<TurnRecord> {
      return (request) =>
        new Promise((resolve, reject) => {
          if (!(request.agent.id in agentToWg)) {
            reject(new Error(`agent ${request.agent.id} has no worker group`));
            return;
          }
          pending.push({ request, at, resolve, reject });
          if (!scheduled) {
            scheduled = true;
            setTimeout(flush, 0);
          }
        });
    },
  };
}

function firstStop(text: string, stops: readonly string[]): number | null {
  let best: number | null = null;
  for (const s of stops) {
    const i = text.indexOf(s);
    if (i >= 0 && (best === null || i + s.length < best)) best = i + s.length;
  }
  return best;
}
