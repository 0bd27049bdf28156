/**
 * Deterministic event ids: an event's id is a function of where it sits in a run, never of when
 * it was produced. Re-running the same step after a crash yields the same ids, so re-appending is
 * a no-op and appending something different under the same coordinates is a conflict.
 *
 * @example
 * ```ts
 * import { eventId } from "./event-id.ts";
 *
 * eventId("run-1", "turn.generated", { step: 3, phase: "rollout", agent: "solver",
 *   prompt: 0, sample: 5, turn: 1 }); // 32 hex digits, the same on every machine
 * ```
 */
import { encodeCanonical, quoteString } from "./canonical.ts";
import { sha256Hex } from "./hash-chain.ts";

/** Where an event sits: step, worker group, agent, prompt, sample, turn and the like. */
export type Coordinates = Readonly<Record<string, string | number | null>>;

/** The first 128 bits (32 hex digits) of sha256 of the canonical `{coordinates, stream, type}`. */
export function eventId(stream: string, type: string, coordinates: Coordinates): string {
  // The canonical JSON of {coordinates, stream, type}, assembled without re-walking the envelope.
  const key = `{"coordinates":${encodeCanonical(coordinates).json},"stream":` +
    `${quoteString(stream)},"type":${quoteString(type)}}`;
  return sha256Hex(key).slice(0, 32);
}
