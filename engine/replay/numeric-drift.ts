/**
 * Tolerance comparison for a replay on another backend, where low bits differ by design: the
 * largest absolute and relative differences of logprobs, losses and gradient norms, and where
 * the sampled token streams first part (after which everything downstream may differ).
 */
import type { NewEvent } from "../../events/mod.ts";

/** Largest differences seen in one family of numbers. */
export interface DriftStats {
  readonly compared: number;
  readonly maxAbs: number;
  readonly maxRel: number;
  /** values outside `atol + rtol * |recorded|` */
  readonly outside: number;
}

/** Where regenerated tokens first differ from the logged ones. */
export interface TokenDivergence {
  readonly eventId: string;
  readonly step: number;
  readonly phase: string;
  readonly trajectory: string;
  readonly agent: string;
  readonly turn: number;
  /** index into responseTokens */
  readonly index: number;
  readonly recorded: number | null;
  readonly replayed: number | null;
}

/** The tolerance report. */
export interface NumericDrift {
  readonly kind: "numeric-drift";
  readonly rtol: number;
  readonly atol: number;
  readonly logprobs: DriftStats;
  readonly losses: DriftStats;
  readonly gradNorms: DriftStats;
  readonly firstTokenDivergence: TokenDivergence | null;
}

type Data<T extends NewEvent["type"]> = Extract<NewEvent, { type: T }>["data"];

/**
 * Accumulates drift over pairs of logged and regenerated events.
 *
 * @example
 * ```ts
 * import type { NewEvent } from "../../events/mod.ts";
 * import { numericDrift } from "./numeric-drift.ts";
 *
 * declare const id: string; // the event id the two share
 * declare const logged: NewEvent; // an event of the log
 * declare const regenerated: NewEvent; // its twin from the replay
 * const drift = numericDrift({ rtol: 1e-3, atol: 1e-4 });
 * drift.add(id, logged, regenerated);
 * drift.report().logprobs.maxAbs;
 * ```
 */
export function numericDrift(tolerance: { rtol: number; atol: number }) {
  const { rtol, atol } = tolerance;
  const stats = () => ({ compared: 0, maxAbs: 0, maxRel: 0, outside: 0 });
  const families = { logprobs: stats(), losses: stats(), gradNorms: stats() };
  let firstToken: TokenDivergence | null = null;
  const measure = (family: keyof typeof families, recorded: number, replayed: number) => {
    const s = families[family];
    const abs = Math.abs(recorded - replayed);
    const scale = Math.max(Math.abs(recorded), Math.abs(replayed));
    const rel = scale === 0 ? 0 : abs / scale;
    s.compared++;
    if (!(abs <= s.maxAbs)) s.maxAbs = abs;
    if (!(rel <= s.maxRel)) s.maxRel = rel;
    if (!(abs <= atol + rtol * Math.abs(recorded))) s.outside++;
  };
  return {
    add(id: string, recorded: NewEvent, replayed: NewEvent): void {
      if (recorded.type === "turn.generated" && replayed.type === "turn.generated") {
        const a = recorded.data as Data<"turn.generated">;
        const b = replayed.data as Data<"turn.generated">;
        const n = Math.min(a.responseTokens.length, b.responseTokens.length);
        let same = 0;
        while (same < n && a.responseTokens[same] === b.responseTokens[same]) same++;
        // Logprobs are comparable only while both sampled the same tokens.
        for (let i = 0; i < same; i++) measure("logprobs", a.logprobs[i], b.logprobs[i]);
        const parted = same < n || a.responseTokens.length !== b.responseTokens.length;
        if (parted && firstToken === null) {
          firstToken = {
            eventId: id,
            step: a.step,
            phase: a.phase,
            trajectory: a.trajectory,
            agent: a.agent,
            turn: a.turn,
            index: same,
            recorded: a.responseTokens[same] ?? null,
            replayed: b.responseTokens[same] ?? null,
          };
        }
      } else if (
        recorded.type === "gradient_step.applied" && replayed.type === "gradient_step.applied"
      ) {
        const a = recorded.data as Data<"gradient_step.applied">;
        const b = replayed.data as Data<"gradient_step.applied">;
        for (const [k, v] of Object.entries(a.losses)) {
          if (k in b.losses) measure("losses", v, b.losses[k]);
        }
        measure("gradNorms", a.gradNormBeforeClip, b.gradNormBeforeClip);
      }
    },
    report(): NumericDrift {
      return Object.freeze({
        kind: "numeric-drift",
        rtol,
        atol,
        logprobs: { ...families.logprobs },
        losses: { ...families.losses },
        gradNorms: { ...families.gradNorms },
        firstTokenDivergence: firstToken,
      });
    },
  };
}
