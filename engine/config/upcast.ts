/**
 * Recorded configs brought up to this code's CONFIG_SCHEMA_VERSION, for resume and replay: a run
 * recorded under an older schema re-executes exactly when nothing it used changed meaning since.
 * Each step names the keys whose meaning changed; a run that used one of them cannot be
 * re-executed by this code and is refused with the reason (its events stay readable).
 */
import type { NormalizedConfig } from "./normalize.ts";
import { CONFIG_SCHEMA_VERSION } from "./schema.ts";

/** A recorded config this code can re-execute, or why it cannot. */
export type UpcastResult =
  | { readonly kind: "config"; readonly config: NormalizedConfig }
  | { readonly kind: "refused"; readonly reason: string };

type RecordedConfig = Record<string, unknown> & { readonly schema_version?: unknown };

/** One schema step: from `from` to `from + 1`; returns a reason to refuse, or the new config. */
interface UpcastStep {
  readonly from: number;
  readonly upcast: (config: RecordedConfig) => RecordedConfig | string;
}

const STEPS: readonly UpcastStep[] = [
  {
    // 3: rloo and reinforce++ centre each action's own score on the mean first-action score, as
    // the Dr. MAS code does; the schema-2 forms are rloo-trajectory and reinforce++-trajectory.
    // Generated tasks take their problems from tasks.seed, which schema 2 did not have: its
    // problems were the run seed's, so that is the value it upcasts to.
    from: 2,
    upcast: (config) => {
      const kind = (config.estimator as { kind?: unknown } | undefined)?.kind;
      if (kind === "rloo" || kind === "reinforce++") {
        return `estimator ${kind} now takes the Dr. MAS code's numerators (schema 3); the run's ` +
          `form is estimator ${kind}-trajectory, under which it can be trained again`;
      }
      const tasks = config.tasks as { kind?: unknown } | undefined;
      const generated = tasks?.kind === "synthetic-math" || tasks?.kind === "synthetic-search";
      return {
        ...config,
        schema_version: 3,
        ...(generated ? { tasks: { ...tasks, seed: config.seed } } : {}),
      };
    },
  },
];

/**
 * Loss keys schema 3 gained after runs under it were recorded (issue 33 items 4, 1, 5): a
 * recorded config without them trained without them, so absent means off, while a new config
 * defaults to veRL's dual clip and KL clamp. Applied to every recorded config: schema 2 lacks them
 * all, and early schema-3 runs do too.
 */
const LOSS_TERMS_OFF = { clip_ratio_c: 0, kl_clamp: 0, entropy_coeff: 0 } as const;
const UPDATES_OFF = { micro_batch_size: null } as const;

function withLossTermsOff(config: RecordedConfig): RecordedConfig {
  return {
    ...config,
    loss: { ...LOSS_TERMS_OFF, ...(config.loss as object | undefined) },
    updates: { ...UPDATES_OFF, ...(config.updates as object | undefined) },
  };
}

/**
 * @example
 * ```ts
 * import { upcastRecordedConfig } from "./mod.ts";
 * declare const recorded: Record<string, unknown>; // a run-started event's data.config
 * const r = upcastRecordedConfig(recorded);
 * if (r.kind === "refused") console.error(r.reason);
 * ```
 */
export function upcastRecordedConfig(recorded: Record<string, unknown>): UpcastResult {
  let config: RecordedConfig = recorded;
  while (config.schema_version !== CONFIG_SCHEMA_VERSION) {
    const step = STEPS.find((s) => s.from === config.schema_version);
    if (!step) {
      return {
        kind: "refused",
        reason: `it was recorded under config schema ${String(recorded.schema_version)}, this ` +
          `code runs schema ${CONFIG_SCHEMA_VERSION} and reads schemas ` +
          `${STEPS.map((s) => s.from).join(", ")} onwards (estimators, logprob temperature and ` +
          "LoRA dropout changed meaning before that; see CONFIG_SCHEMA_VERSION in " +
          "engine/config/schema.ts)",
      };
    }
    const next = step.upcast(config);
    if (typeof next === "string") return { kind: "refused", reason: next };
    config = next;
  }
  return { kind: "config", config: withLossTermsOff(config) as unknown as NormalizedConfig };
}
