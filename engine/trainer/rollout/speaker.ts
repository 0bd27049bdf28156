/**
 * Turns workflow requests into model calls, with continuous batching per worker group: each group
 * has one running decode batch (adapters/model's `ContinuousBatch`); a turn's sequence leaves it
 * when it ends, and the episode's next request (any agent's turn) joins between decode steps.
 *
 * Every sampled token is drawn from the counter-based generator keyed by (seed, phase, step,
 * agent, prompt, sample, turn, token index), so no batching changes a token. What a batch can
 * change is float32 rounding (other matmul shapes), and a logprob's last bits could, very rarely,
 * flip a sampled token; so the batch of every decode step must never depend on timing. The
 * speaker knows every live episode, and admits requests only at a fixed boundary: before each
 * round of decode steps it waits until every live episode has a request outstanding or has
 * ended (no episode is still computing its next turn), then admits every waiting request in the
 * order (phase, step, prompt, sample, turn), and steps each group's batch once, in group order.
 * A round's admissions are thus a function of the tokens so far, whatever the timing of the
 * native calls or of the workflows' own code between turns. (A workflow that keeps computing
 * after issuing a request, then issues another, is outside this rule; the built-in ones issue a
 * round's parallel requests together.)
 */
import type { ContinuousBatch, Sequence, SequenceOutcome } from "../../../adapters/model/mod.ts";
import { randomStream, sampleLogits } from "../../random/mod.ts";
import type { Speak, TurnRequest } from "../../workflows/mod.ts";
import type { GroupPolicy } from "./policy-pool.ts";

/** What the speaker needs of a policy: a trainer's worker group or a frozen evaluation model. */
export type SpeakingPolicy = Pick<GroupPolicy, "id" | "spec" | "tokenizer" | "openBatch">;

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
  /** Largest number of rows decoding or queued at once, all worker groups together. */
  readonly maxBatch: number;
  /**
   * Requests join running batches between decode steps (default true); false admits them only
   * once every group's batch has emptied, a whole wave of turns at a time (for comparison).
   */
  readonly continuous?: boolean;
}

/** A live episode: how many of its requests are waiting or decoding. */
interface EpisodeState {
  outstanding: number;
}

interface Pending {
  readonly request: TurnRequest;
  readonly at: EpisodeCoordinates;
  readonly episode: EpisodeState;
  readonly resolve: (output: { text: string; extra: TurnRecord }) => void;
  readonly reject: (err: unknown) => void;
}

/** A worker group's running batch and the request behind each of its sequences. */
interface GroupBatch {
  readonly policy: SpeakingPolicy;
  readonly batch: ContinuousBatch;
  readonly pending: Map<Sequence, { pending: Pending; prompt: readonly number[] }>;
}

/** Admission order: (phase, step, prompt, sample, turn), then agent for a round's parallel turns. */
function admissionOrder(a: Pending, b: Pending): number {
  return a.at.phase.localeCompare(b.at.phase) || a.at.step - b.at.step ||
    a.at.prompt - b.at.prompt || a.at.sample - b.at.sample ||
    a.request.turn - b.request.turn || a.request.agent.id.localeCompare(b.request.agent.id);
}

/**
 * Builds the speaker of a run.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import type { Question, Workflow } from "../../workflows/mod.ts";
 * import { createSpeaker, type SpeakerSettings, type SpeakingPolicy } from "./speaker.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const groups: ReadonlyMap<string, SpeakingPolicy>; // each worker group's policy
 * declare const settings: SpeakerSettings;
 * declare const workflow: Workflow;
 * declare const question: Question;
 * const speaker = createSpeaker(groups, config.agent_to_wg, settings);
 * const [step, prompt, sample] = [0, 0, 1];
 * const episode = await speaker.episode({ phase: "rollout", step, prompt, sample }, (speak) =>
 *   workflow.run(question, speak));
 * ```
 */
export function createSpeaker(
  groups: ReadonlyMap<string, SpeakingPolicy>,
  agentToWg: Readonly<Record<string, string>>,
  settings: SpeakerSettings,
) {
  const live = new Set<EpisodeState>();
  let waiting: Pending[] = [];
  const running = new Map<string, GroupBatch>();
  let wake: (() => void) | null = null;
  let driving = false;

  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  // The boundary: no live episode is between turns.
  const settled = () => [...live].every((e) => e.outstanding > 0);

  function done(p: Pending, settle: () => void) {
    p.episode.outstanding--;
    settle();
  }

  function admit(p: Pending) {
    const wg = agentToWg[p.request.agent.id];
    let group = running.get(wg);
    if (!group) {
      const policy = groups.get(wg)!;
      // Admissions that at least double the batch: few prefills and splices per wave of turns.
      const batch = policy.openBatch({ maxRows: settings.maxBatch, admission: "doubling" });
      group = { policy, batch, pending: new Map() };
      running.set(wg, group);
    }
    const { policy, batch } = group;
    const stream = randomStream({
      seed: settings.seed,
      purpose: `sample-token:${p.at.phase}`,
      step: p.at.step,
      agent: p.request.agent.id,
      prompt: p.at.prompt,
      sample: p.at.sample,
      turn: p.request.turn,
    });
    const options = { temperature: settings.temperature, topP: settings.topP };
    try {
      const prompt = turnPrompt(policy, p.request, settings.maxTokens);
      const sequence = batch.submit({
        prompt,
        maxTokens: settings.maxTokens,
        // The recorded logprobs are of the distribution sampled from, softmax(logits / T).
        temperature: settings.temperature,
        stopTokenIds: policy.tokenizer.eosTokenIds,
        choose: (logits, index) => sampleLogits(stream, index, logits, options),
      });
      group.pending.set(sequence, { pending: p, prompt });
    } catch (err) {
      done(p, () => p.reject(err));
    }
  }

  function deliver(group: GroupBatch, outcome: SequenceOutcome) {
    const { pending: p, prompt } = group.pending.get(outcome.sequence)!;
    group.pending.delete(outcome.sequence);
    if (outcome.kind === "failed") {
      done(p, () => p.reject(outcome.error));
      return;
    }
    const row = outcome.row;
    const finish = row.finishReason === "length" ? "length" : "stop";
    const output = endTurn(group.policy, prompt, row.tokens, row.logprobs, finish, settings.stop);
    done(p, () => p.resolve(output));
  }

  /** Rounds of admission and decode steps while any request is outstanding. */
  async function drive() {
    driving = true;
    try {
      // Episodes start together (one rollout's map): let every one of them register first.
      await Promise.resolve();
      for (;;) {
        while (!settled()) await new Promise<void>((resolve) => wake = resolve);
        if (waiting.length === 0 && running.size === 0) return;
        if (settings.continuous !== false || running.size === 0) {
          // At most maxBatch rows decode or wait in all groups together: every group's cache is
          // alive at once, and together they stay within what one batch of maxBatch rows holds.
          const rows = [...running.values()]
            .reduce((n, g) => n + g.batch.running + g.batch.queued, 0);
          waiting.sort(admissionOrder).splice(0, Math.max(0, settings.maxBatch - rows))
            .forEach(admit);
        }
        const order = [...running.keys()].sort();
        for (const wg of order) {
          const group = running.get(wg)!;
          if (group.batch.running + group.batch.queued === 0) continue;
          for (const outcome of await group.batch.step()) deliver(group, outcome);
        }
        for (const wg of order) {
          const group = running.get(wg)!;
          if (group.batch.running + group.batch.queued > 0) continue;
          running.delete(wg);
          await group.batch.close();
        }
      }
    } catch (err) {
      // Not expected (a step reports model failures per sequence); fail what is outstanding.
      for (const p of waiting) done(p, () => p.reject(err));
      waiting = [];
      for (const group of running.values()) {
        for (const { pending: p } of group.pending.values()) done(p, () => p.reject(err));
        await group.batch.close();
      }
      running.clear();
    } finally {
      driving = false;
    }
  }

  function speakIn(at: EpisodeCoordinates, episode: EpisodeState): Speak<TurnRecord> {
    return (request) =>
      new Promise((resolve, reject) => {
        if (!(request.agent.id in agentToWg)) {
          reject(new Error(`agent ${request.agent.id} has no worker group`));
          return;
        }
        episode.outstanding++;
        waiting.push({ request, at, episode, resolve, reject });
        if (!driving) drive();
        poke();
      });
  }

  return {
    /**
     * Plays one episode: `run` speaks through the returned Speak; the episode counts as live
     * (its next request awaited before each round) until `run` settles.
     */
    async episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>) {
      const state: EpisodeState = { outstanding: 0 };
      live.add(state);
      try {
        return await run(speakIn(at, state));
      } finally {
        live.delete(state);
        poke();
      }
    },
  };
}

/**
 * A turn's prompt tokens: the request through the chat template when the tokenizer has one,
 * keeping the most recent part when it would not leave `maxTokens` of the model's window.
 *
 * @example
 * ```ts
 * import type { TurnRequest } from "../../workflows/mod.ts";
 * import { type SpeakerSettings, type SpeakingPolicy, turnPrompt } from "./speaker.ts";
 *
 * declare const policy: SpeakingPolicy;
 * declare const request: TurnRequest; // a workflow's request for one agent's turn
 * declare const settings: SpeakerSettings;
 * const ids = turnPrompt(policy, request, settings.maxTokens);
 * ```
 */
export function turnPrompt(
  policy: Pick<SpeakingPolicy, "spec" | "tokenizer">,
  request: Pick<TurnRequest, "prompt">,
  maxTokens: number,
): number[] {
  const tokenizer = policy.tokenizer;
  const context = policy.spec.config.maxPositionEmbeddings - maxTokens;
  const ids = tokenizer.chatTemplate
    ? tokenizer.encodeChat([{ role: "user", content: request.prompt }])
    : tokenizer.encode(request.prompt);
  // Long refinement histories keep their most recent part: the model's window is finite.
  return ids.length > context ? ids.slice(ids.length - context) : ids;
}

/**
 * A sampled turn's text and record: the tokens are cut after the one that completes the first
 * stop string (text before it), whoever sampled them (the local batch or a server asked without
 * stop strings), so both backends record the same turn.
 *
 * @example
 * ```ts
 * import { endTurn, type SpeakingPolicy } from "./speaker.ts";
 *
 * declare const policy: SpeakingPolicy;
 * declare const prompt: number[]; // the turn's prompt tokens
 * declare const tokens: number[]; // those sampled, up to the token limit
 * declare const logprobs: Float32Array; // one per sampled token
 * const { text, extra } = endTurn(policy, prompt, tokens, logprobs, "length", ["\n\n"]);
 * ```
 */
export function endTurn(
  policy: Pick<SpeakingPolicy, "id" | "tokenizer">,
  prompt: readonly number[],
  sampled: readonly number[],
  sampledLogprobs: ArrayLike<number>,
  finish: "stop" | "length",
  stop: readonly string[],
): { text: string; extra: TurnRecord } {
  const tokenizer = policy.tokenizer;
  let tokens = [...sampled];
  let logprobs = Float32Array.from(sampledLogprobs);
  let text = tokenizer.decode(tokens, { skipSpecialTokens: true });
  let finishReason = finish;
  const cut = firstStop(text, stop);
  if (cut !== null) {
    // Keep the tokens up to and including the one that completed the stop string.
    let n = 0;
    while (n < tokens.length && tokenizer.decode(tokens.slice(0, n + 1)).length < cut) n++;
    tokens = tokens.slice(0, n + 1);
    logprobs = logprobs.slice(0, n + 1);
    text = text.slice(0, cut);
    finishReason = "stop";
  }
  return {
    text,
    extra: {
      workerGroup: policy.id,
      promptTokens: Int32Array.from(prompt),
      responseTokens: Int32Array.from(tokens),
      logprobs,
      finishReason,
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
