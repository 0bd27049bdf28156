/**
 * Flattens a run config to dotted keys with text values, the `run_config` table: every leaf
 * becomes one row, arrays by index. Strings stay as they are; other scalars print as JSON.
 *
 * @example
 * ```ts
 * flattenConfig({ estimator: "dr-mas", agents: [{ name: "solver" }], lr: 1e-6 });
 * // [["agents.0.name", "solver"], ["estimator", "dr-mas"], ["lr", "0.000001"]]
 * ```
 */
export function flattenConfig(config: unknown): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: unknown, key: string) => {
    if (value !== null && typeof value === "object") {
      const entries = Array.isArray(value)
        ? value.map((v, i) => [String(i), v] as const)
        : Object.entries(value);
      if (entries.length === 0) out.push([key, JSON.stringify(value)]);
      for (const [k, v] of entries) walk(v, key ? `${key}.${k}` : k);
      return;
    }
    out.push([key, typeof value === "string" ? value : scalarText(value)]);
  };
  walk(config, "");
  return out.sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0);
}

function scalarText(value: unknown): string {
  // String() gives the shortest round-tripping decimal and spells NaN/Infinity; JSON would not.
  return typeof value === "number" ? String(value) : JSON.stringify(value) ?? "null";
}

/**
 * Agent roles named in a config, for the `turns.role` column: objects that carry a string `role`
 * with a string `name` (or `id`, `agent`), and records keyed by agent name whose value carries a
 * string `role`. The first role found for an agent wins.
 *
 * @example
 * ```ts
 * agentRoles({ agents: { g1: { role: "generator" } } }); // [["g1", "generator"]]
 * ```
 */
export function agentRoles(config: unknown): [string, string][] {
  const roles = new Map<string, string>();
  const walk = (value: unknown, key: string | null) => {
    if (value === null || typeof value !== "object") return;
    const obj = value as Record<string, unknown>;
    if (typeof obj.role === "string") {
      const agent = [obj.name, obj.id, obj.agent].find((v) => typeof v === "string") ??
        (key !== null && !/^\d+$/.test(key) ? key : undefined);
      if (typeof agent === "string" && !roles.has(agent)) roles.set(agent, obj.role);
    }
    for (const [k, v] of Object.entries(obj)) walk(v, k);
  };
  walk(config, null);
  return [...roles.entries()];
}
