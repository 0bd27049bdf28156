/**
 * The speaker of the openai rollout backend: every agent turn is one request to the least busy
 * endpoint, in the dialect of the servers' engine (engine-dialect.ts: vLLM's `/v1/completions`
 * or SGLang's `/generate`), with the turn's prompt as token ids (the trainer's own chat template
 * and truncation, speaker.ts `turnPrompt`), the group's current adapter, and the
 * request for the sampled tokens' ids and logprobs. Stop strings are applied here, on the
 * returned tokens, as the local speaker applies them, so both backends cut a turn alike. The
 * seed and `polyrl_draw` name the local speaker's draw coordinates (seed, "sample-token:<phase>",
 * step, agent, prompt, sample, turn): deno task serve then samples what the local backend would.
 */
import type { Speak } from "../../workflows/mod.ts";
import { EndpointError, type EndpointPool } from "./endpoint-pool.ts";
import { engineDialect, type RolloutEngine } from "./engine-dialect.ts";
import type { ServedAdapters } from "./served-adapters.ts";
import {
  endTurn,
  type EpisodeCoordinates,
  type SpeakerSettings,
  type SpeakingPolicy,
  turnPrompt,
  type TurnRecord,
} from "./speaker.ts";

/**
 * Builds the openai speaker of a run; the same `episode` as the local speaker's.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { endpointPool } from "./endpoint-pool.ts";
 * import { createOpenAISpeaker } from "./openai-speaker.ts";
 * import type { GroupPolicy } from "./policy-pool.ts";
 * import { servedAdapters } from "./served-adapters.ts";
 * import type { SpeakerSettings } from "./speaker.ts";
 *
 * declare const config: NormalizedConfig; // its rollout backend openai
 * declare const groups: ReadonlyMap<string, GroupPolicy>; // each worker group's policy
 * declare const settings: SpeakerSettings;
 * const rollout = config.rollout!;
 * const endpoints = endpointPool(rollout);
 * const served = servedAdapters(endpoints, rollout, groups);
 * const speaker = createOpenAISpeaker(
 *   groups,
 *   config.agent_to_wg,
 *   settings,
 *   endpoints,
 *   served,
 *   rollout.engine,
 * );
 * ```
 */
export function createOpenAISpeaker(
  groups: ReadonlyMap<string, Pick<SpeakingPolicy, "id" | "spec" | "tokenizer">>,
  agentToWg: Readonly<Record<string, string>>,
  settings: Omit<SpeakerSettings, "maxBatch" | "continuous">,
  endpoints: EndpointPool,
  served: Pick<ServedAdapters, "modelOf" | "baseOf">,
  engine: RolloutEngine | undefined,
) {
  const dialect = engineDialect(engine);
  function speakIn(at: EpisodeCoordinates): Speak<TurnRecord> {
    return async (request) => {
      const wg = agentToWg[request.agent.id];
      if (wg === undefined) throw new Error(`agent ${request.agent.id} has no worker group`);
      const policy = groups.get(wg)!;
      const prompt = turnPrompt(policy, request, settings.maxTokens);
      const model = served.modelOf(wg);
      const { endpoint, json } = await endpoints.post(
        dialect.turnPath,
        dialect.turnBody({
          prompt,
          adapter: model === served.baseOf(wg) ? null : model,
          base: served.baseOf(wg),
          maxTokens: settings.maxTokens,
          temperature: settings.temperature,
          topP: settings.topP,
          seed: settings.seed,
          draw: {
            purpose: `sample-token:${at.phase}`,
            step: at.step,
            agent: request.agent.id,
            prompt: at.prompt,
            sample: at.sample,
            turn: request.turn,
          },
        }),
      );
      const answer = dialect.readAnswer(json);
      if (typeof answer === "string") throw new EndpointError(endpoint, dialect.turnPath, answer);
      const { tokens, logprobs, finish } = answer;
      return endTurn(policy, prompt, tokens, logprobs, finish, settings.stop);
    };
  }

  return {
    /** Plays one episode: `run` speaks through the returned Speak. */
    episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>): Promise<T> {
      return run(speakIn(at));
    },
  };
}
