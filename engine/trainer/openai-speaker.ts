/**
 * The speaker of the openai rollout backend: every agent turn is one `POST /v1/completions` to the
 * least busy endpoint, with the turn's prompt as token ids (the trainer's own chat template and
 * truncation, engine/trainer/speaker.ts `turnPrompt`), the group's current adapter as `model`,
 * `logprobs: 0` and `return_token_ids` (vLLM's field) for the sampled tokens and their logprobs.
 * Stop strings are applied here, on the returned tokens, as the local speaker applies them, so
 * both backends cut a turn alike. `seed` and `polyrl_draw` name the local speaker's draw
 * coordinates (seed, "sample-token:<phase>", step, agent, prompt, sample, turn): deno task serve
 * then samples what the local backend would; vLLM and SGLang ignore polyrl_draw.
 */
import type { Speak } from "../workflows/mod.ts";
import { EndpointError, type EndpointPool } from "./endpoint-pool.ts";
import type { ServedAdapters } from "./served-adapters.ts";
import {
  endTurn,
  type EpisodeCoordinates,
  type SpeakerSettings,
  type SpeakingPolicy,
  turnPrompt,
  type TurnRecord,
} from "./speaker.ts";

interface CompletionChoice {
  readonly token_ids?: readonly number[];
  readonly logprobs?: { readonly token_logprobs?: readonly (number | null)[] } | null;
  readonly finish_reason?: string | null;
}

/**
 * Builds the openai speaker of a run; the same `episode` as the local speaker's.
 *
 * @example
 * const speaker = createOpenAISpeaker(pool.groups, config.agent_to_wg, settings, endpoints, served);
 */
export function createOpenAISpeaker(
  groups: ReadonlyMap<string, Pick<SpeakingPolicy, "id" | "spec" | "tokenizer">>,
  agentToWg: Readonly<Record<string, string>>,
  settings: Omit<SpeakerSettings, "maxBatch" | "continuous">,
  endpoints: EndpointPool,
  served: Pick<ServedAdapters, "modelOf">,
) {
  function speakIn(at: EpisodeCoordinates): Speak<TurnRecord> {
    return async (request) => {
      const wg = agentToWg[request.agent.id];
      if (wg === undefined) throw new Error(`agent ${request.agent.id} has no worker group`);
      const policy = groups.get(wg)!;
      const prompt = turnPrompt(policy, request, settings.maxTokens);
      const { endpoint, json } = await endpoints.post("/v1/completions", {
        model: served.modelOf(wg),
        prompt,
        max_tokens: settings.maxTokens,
        temperature: settings.temperature,
        top_p: settings.topP,
        seed: settings.seed,
        logprobs: 0,
        return_token_ids: true,
        polyrl_draw: {
          purpose: `sample-token:${at.phase}`,
          step: at.step,
          agent: request.agent.id,
          prompt: at.prompt,
          sample: at.sample,
          turn: request.turn,
        },
      });
      const choice = (json as { choices?: CompletionChoice[] }).choices?.[0];
      const tokens = choice?.token_ids;
      const logprobs = choice?.logprobs?.token_logprobs;
      if (!tokens || !logprobs || logprobs.length !== tokens.length || logprobs.includes(null)) {
        throw new EndpointError(
          endpoint,
          "/v1/completions",
          "the answer has no token_ids with one logprob each; the rollout backend needs a " +
            "server that returns them (vLLM's return_token_ids, deno task serve)",
        );
      }
      const finish = choice.finish_reason === "length" ? "length" : "stop";
      return endTurn(policy, prompt, tokens, logprobs as number[], finish, settings.stop);
    };
  }

  return {
    /** Plays one episode: `run` speaks through the returned Speak. */
    episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>): Promise<T> {
      return run(speakIn(at));
    },
  };
}
