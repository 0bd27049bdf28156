/** Layering of config sources: preset, then file, then command-line overrides. */

type Json = unknown;

function isPlainObject(v: Json): v is Record<string, Json> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

/**
 * Deep merge: objects merge key by key, arrays and scalars replace, and `null` removes the key
 * (so its default applies again).
 *
 * @example
 * ```ts
 * mergeConfig({ sampling: { temperature: 1, top_p: 0.9 } }, { sampling: { top_p: null } });
 * // { sampling: { temperature: 1 } }
 * ```
 */
export function mergeConfig(base: Json, override: Json): Json {
  if (!isPlainObject(override)) return override;
  const out: Record<string, Json> = isPlainObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(override)) {
    if (value === null) delete out[key];
    else if (value !== undefined) out[key] = mergeConfig(out[key], value);
  }
  return out;
}
