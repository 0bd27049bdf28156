/**
 * Replaying a run whose turns came from inference servers (rollout.backend openai) without the
 * servers. Two modes:
 * - `keyed`: every turn is sampled again in-process with the same keyed draws the servers used
 *   (deno task serve's `polyrl_draw`), and where its prompt and tokens equal the recorded turn's,
 *   the recorded turn (with the server's logprobs, which the TIS correction read) stands in for
 *   it; where they differ, the re-sampled turn goes on, so the replay's comparison names that
 *   turn as the first divergence.
 * - `recorded`: for engines that are not bit-reproducible (vLLM, SGLang), the recorded turns are
 *   taken as given: the workflow runs again and each of its requests is answered with the
 *   recorded turn at its coordinates (its prompt tokens re-derived, so a prompt that differs from
 *   the log shows as a divergence), then rewards, advantages and updates are re-executed.
 */
import type { NewEvent, StoredEvent } from "../../../events/mod.ts";
import type { Speak } from "../../workflows/mod.ts";
import {
  type EpisodeCoordinates,
  type SpeakerSettings,
  type SpeakingPolicy,
  turnPrompt,
  type TurnRecord,
} from "./speaker.ts";

/** How a replay's rollouts are produced. */
export const REPLAY_ROLLOUTS = ["keyed", "recorded"] as const;
export type ReplayRollouts = (typeof REPLAY_ROLLOUTS)[number];

/** A run's recorded turns by (phase, step, prompt, sample, turn). */
export type RecordedTurns = ReadonlyMap<string, { text: string; extra: TurnRecord }>;

const turnKey = (at: EpisodeCoordinates, turn: number) =>
  `${at.phase}/${at.step}/${at.prompt}/${at.sample}/${turn}`;

/**
 * The `turn.generated` events of a log, by coordinates.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../../events/mod.ts";
 * import { readRunLog } from "../run-log/mod.ts";
 * import { recordedTurns } from "./recorded-turns.ts";
 *
 * declare const store: EventStore;
 * const log = await readRunLog(store, "run-1");
 * const turns = recordedTurns(log.events);
 * ```
 */
export function recordedTurns(events: readonly StoredEvent<NewEvent>[]): RecordedTurns {
  const turns = new Map<string, { text: string; extra: TurnRecord }>();
  for (const e of events) {
    if (e.type !== "turn.generated") continue;
    const d = e.data;
    if (d.finishReason === "abort") continue;
    turns.set(turnKey(d, d.turn), {
      text: d.text,
      extra: {
        workerGroup: d.workerGroup,
        promptTokens: Int32Array.from(d.promptTokens),
        responseTokens: Int32Array.from(d.responseTokens),
        logprobs: Float32Array.from(d.logprobs),
        finishReason: d.finishReason,
      },
    });
  }
  return turns;
}

/** No recorded turn at a request's coordinates: the replay ran past what the log holds. */
export class RecordedTurnMissing extends Error {
  override name = "RecordedTurnMissing";
}

const same = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  a.length === b.length && Array.prototype.every.call(a, (v: number, i: number) => v === b[i]);

/**
 * Wraps a speaker for a replay: `recorded` answers from the log; `keyed` samples with `speaker`
 * and keeps the recorded turn where the tokens agree.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { type RecordedTurns, replaySpeaker } from "./recorded-turns.ts";
 * import { createSpeaker, type SpeakerSettings, type SpeakingPolicy } from "./speaker.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const turns: RecordedTurns; // recordedTurns(log.events)
 * declare const groups: ReadonlyMap<string, SpeakingPolicy>;
 * declare const settings: SpeakerSettings;
 * const local = createSpeaker(groups, config.agent_to_wg, settings);
 * const speaker = replaySpeaker("keyed", turns, groups, config.agent_to_wg, settings, local);
 * ```
 */
export function replaySpeaker(
  mode: ReplayRollouts,
  turns: RecordedTurns,
  groups: ReadonlyMap<string, Pick<SpeakingPolicy, "spec" | "tokenizer">>,
  agentToWg: Readonly<Record<string, string>>,
  settings: Pick<SpeakerSettings, "maxTokens">,
  speaker: {
    episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>): Promise<T>;
  },
) {
  const keyed =
    (at: EpisodeCoordinates, speak: Speak<TurnRecord>): Speak<TurnRecord> => async (request) => {
      const out = await speak(request);
      const recorded = turns.get(turnKey(at, request.turn));
      const agrees = recorded !== undefined &&
        same(recorded.extra.promptTokens, out.extra.promptTokens) &&
        same(recorded.extra.responseTokens, out.extra.responseTokens);
      if (!agrees) return out;
      return { text: out.text, extra: { ...out.extra, logprobs: recorded.extra.logprobs } };
    };
  const given = recordedSpeaker(turns, groups, agentToWg, settings);
  return {
    episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>): Promise<T> {
      if (mode === "recorded") return given.episode(at, run);
      return speaker.episode(at, (speak) => run(keyed(at, speak)));
    },
  };
}

/**
 * A speaker that answers every request with the recorded turn at its coordinates, its prompt
 * tokens re-derived from the request (so a prompt that differs from the record shows): a replay's
 * `recorded` mode, and a trainer rebuilding the episodes its rollout workers played.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { type RecordedTurns, recordedSpeaker } from "./recorded-turns.ts";
 * import type { SpeakerSettings, SpeakingPolicy } from "./speaker.ts";
 *
 * declare const config: NormalizedConfig;
 * declare const turns: RecordedTurns; // recordedTurns(log.events)
 * declare const groups: ReadonlyMap<string, SpeakingPolicy>;
 * declare const settings: SpeakerSettings;
 * const speaker = recordedSpeaker(turns, groups, config.agent_to_wg, settings);
 * ```
 */
export function recordedSpeaker(
  turns: RecordedTurns,
  groups: ReadonlyMap<string, Pick<SpeakingPolicy, "spec" | "tokenizer">>,
  agentToWg: Readonly<Record<string, string>>,
  settings: Pick<SpeakerSettings, "maxTokens">,
) {
  const given = (at: EpisodeCoordinates): Speak<TurnRecord> => (request) => {
    const recorded = turns.get(turnKey(at, request.turn));
    if (!recorded) {
      return Promise.reject(
        new RecordedTurnMissing(
          `the log has no turn ${request.turn} of ${at.phase} step ${at.step} prompt ` +
            `${at.prompt} sample ${at.sample}, which the workflow asks for now`,
        ),
      );
    }
    const wg = agentToWg[request.agent.id];
    const prompt = Int32Array.from(turnPrompt(groups.get(wg)!, request, settings.maxTokens));
    return Promise.resolve({
      text: recorded.text,
      extra: { ...recorded.extra, promptTokens: prompt },
    });
  };
  return {
    episode<T>(at: EpisodeCoordinates, run: (speak: Speak<TurnRecord>) => Promise<T>): Promise<T> {
      return run(given(at));
    },
  };
}
