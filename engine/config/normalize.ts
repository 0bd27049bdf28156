/** Validates a raw config object and produces its normalized, frozen form. */
import { crossCheck } from "./cross-checks.ts";
import { ConfigError } from "./errors.ts";
import { issuesFromZod } from "./issues.ts";
import { CONFIG_SCHEMA_VERSION, type ExperimentConfig, experimentConfigSchema } from "./schema.ts";
import {
  assignWorkerGroups,
  checkAgentMap,
  checkSharing,
  type WorkerGroup,
  workerGroups,
} from "./worker-groups.ts";

type Agent = ExperimentConfig["agents"][number];

/**
 * A complete, validated config: every default filled in, every agent's worker group resolved,
 * the worker groups listed. This is what the run-started event records and what is hashed.
 */
export interface NormalizedConfig extends Omit<ExperimentConfig, "agents" | "agent_to_wg"> {
  readonly schema_version: typeof CONFIG_SCHEMA_VERSION;
  /** Frozen at run time; typed as a plain array so it passes where ExperimentConfig is taken. */
  readonly agents: (Agent & { readonly wg: string })[];
  /** Resolved: agent id -> worker-group id. */
  readonly agent_to_wg: Readonly<Record<string, string>>;
  readonly worker_groups: readonly WorkerGroup[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/**
 * Validates `raw` (a parsed JSON object) and normalizes it; throws ConfigError listing every
 * problem with its key, value and what is allowed.
 *
 * @example
 * ```ts
 * const config = parseConfig(JSON.parse(await Deno.readTextFile("exp.json")), "exp.json");
 * config.agents[0].wg; // e.g. "solver"
 * ```
 */
export function parseConfig(raw: unknown, source = "config"): NormalizedConfig {
  const parsed = experimentConfigSchema.safeParse(raw);
  if (!parsed.success) {
    throw new ConfigError(source, issuesFromZod(parsed.error, experimentConfigSchema, raw));
  }
  const config = parsed.data;
  const mapIssues = checkAgentMap(config);
  const issues = [...crossCheck(config), ...mapIssues];
  if (mapIssues.length === 0) {
    issues.push(...checkSharing(config, assignWorkerGroups(config)));
  }
  if (issues.length > 0) throw new ConfigError(source, issues);
  const assignment = assignWorkerGroups(config);
  return deepFreeze({
    schema_version: CONFIG_SCHEMA_VERSION,
    ...config,
    agents: config.agents.map((a) => ({ ...a, wg: assignment[a.id] })),
    agent_to_wg: assignment,
    worker_groups: workerGroups(config, assignment),
  });
}
