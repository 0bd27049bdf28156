/** Layering of config sources: preset, then file, then command-line overrides. */

type Json = unknown;

function isPlainObject(v: Json): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Deep merge: objects merge key by key, arrays and scalars replace, and `null` removes the key
 * (so its default applies again). An object whose `kind` differs from the base's is another
 * variant of a discriminated section (`trainable`, `tasks`, ...): it replaces the base's object
 * instead of inheriting keys that its kind does not have (a LoRA rank under `kind: "full"`).
 *
 * `onReplaced` hears of every such replacement that drops keys the base had set: a file that
 * names `estimator.kind` to change the estimator also drops the preset's `estimator.sigma`, which
 * is easy to miss (study v3's search-grpo cell ran with population σ that way).
 *
 * @example
 * ```ts
 * import { mergeConfig } from "./mod.ts";
 * mergeConfig({ sampling: { temperature: 1, top_p: 0.9 } }, { sampling: { top_p: null } });
 * // { sampling: { temperature: 1 } }
 * mergeConfig({ trainable: { kind: "lora", rank: 8 } }, { trainable: { kind: "full" } });
 * // { trainable: { kind: "full" } }
 * mergeConfig(
 *   { estimator: { kind: "dr-mas", sigma: "unbiased" } },
 *   { estimator: { kind: "grpo" } },
 *   (r) => console.log(r.path, r.dropped),
 * ); // logs estimator { sigma: "unbiased" }; returns { estimator: { kind: "grpo" } }
 * ```
 */
export function mergeConfig(
  base: Json,
  override: Json,
  onReplaced?: (replaced: ReplacedVariant) => void,
  path = "",
): Json {
  if (!isPlainObject(override)) return override;
  const otherKind = isPlainObject(base) && override.kind !== undefined &&
    base.kind !== undefined && override.kind !== base.kind;
  if (otherKind && onReplaced !== undefined) {
    const dropped = Object.fromEntries(
      Object.entries(base as Record<string, Json>).filter(([key]) => !(key in override)),
    );
    if (Object.keys(dropped).length > 0) {
      onReplaced({ path, from: (base as Record<string, Json>).kind, to: override.kind, dropped });
    }
  }
  const out: Record<string, Json> = isPlainObject(base) && !otherKind ? { ...base } : {};
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else if (value !== undefined) {
      out[key] = mergeConfig(out[key], value, onReplaced, path === "" ? key : `${path}.${key}`);
    }
  }
  return out;
}

/**
 * A section of one `kind` that an override of another kind replaced (mergeConfig), and the keys
 * the base had set that the replacement does not name: they are not kept.
 */
export interface ReplacedVariant {
  /** The section's dotted key, `estimator` or `tasks`. */
  readonly path: string;
  readonly from: Json;
  readonly to: Json;
  readonly dropped: Readonly<Record<string, Json>>;
}

/**
 * The warning a user reads for a replaced section: which keys went and how to keep them.
 *
 * @example
 * ```ts
 * import { replacedVariantWarning } from "./merge.ts";
 * replacedVariantWarning(
 *   { path: "estimator", from: "dr-mas", to: "grpo", dropped: { sigma: "unbiased" } },
 *   "preset search-drmas",
 * );
 * // estimator.kind "grpo" replaces preset search-drmas's "dr-mas" estimator, so its
 * // sigma: "unbiased" is not kept (the default applies); name it in estimator to keep it
 * ```
 */
export function replacedVariantWarning(replaced: ReplacedVariant, base: string): string {
  const { path, from, to, dropped } = replaced;
  const keys = Object.entries(dropped).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  const [is, it] = keys.length === 1 ? ["is", "it"] : ["are", "them"];
  return `${path}.kind ${JSON.stringify(to)} replaces ${base}'s ${JSON.stringify(from)} ${path}, ` +
    `so its ${keys.join(", ")} ${is} not kept (the default applies); name ${it} in ${path} to ` +
    `keep ${it}`;
}

/**
 * A config file laid over the preset it `"extends"`: mergeConfig, except that the file's
 * `agents` merge into the preset's instead of replacing them, so that changing one agent's key
 * takes one short entry. An entry with an `id` merges into the preset's agent of that id; one
 * without an id merges into every agent of its `role`; an entry that matches none is appended
 * as a new agent. `"agents": { "replace": [...] }` replaces the list instead (to drop agents).
 *
 * @example
 * ```ts
 * import { extendConfig, presetInput } from "./mod.ts";
 * extendConfig(presetInput("smoke"), { agents: [{ role: "solver", trainable: { rank: 16 } }] });
 * // the smoke agents, the solver's LoRA rank 16
 * ```
 */
export function extendConfig(
  base: Json,
  file: Record<string, Json>,
  onReplaced?: (replaced: ReplacedVariant) => void,
): Json {
  const merged = mergeConfig(base, file, onReplaced) as Record<string, Json>;
  // No agents, or null (the key removed): as mergeConfig has it.
  if (file.agents === undefined || file.agents === null) return merged;
  const baseAgents = isPlainObject(base) ? base.agents : undefined;
  return { ...merged, agents: extendAgents(baseAgents, file.agents) };
}

function extendAgents(base: Json, agents: Json): Json {
  if (isPlainObject(agents) && Object.keys(agents).join() === "replace") return agents.replace;
  // Anything but two lists is left as the file gives it, for the schema to report.
  if (!Array.isArray(base) || !Array.isArray(agents)) return agents;
  const out = [...base];
  for (const entry of agents) {
    const matches = out.flatMap((agent, i) => isMatch(agent, entry) ? [i] : []);
    if (matches.length === 0) out.push(entry);
    for (const i of matches) out[i] = mergeConfig(out[i], entry);
  }
  return out;
}

/** Whether a file's agent entry names this agent: by its id if it has one, else by its role. */
function isMatch(agent: Json, entry: Json): boolean {
  if (!isPlainObject(agent) || !isPlainObject(entry)) return false;
  return entry.id !== undefined
    ? agent.id === entry.id
    : entry.role !== undefined && agent.role === entry.role;
}
