/**
 * Resolves `agent_to_wg` into one worker group per set of agents that share weights. A worker
 * group is updated once per step with only its own agents' actions, so its agents must agree on
 * model, trainable part and optimizer.
 */
import type { ConfigIssue } from "./errors.ts";
import type { ExperimentConfig } from "./schema.ts";

type Agent = ExperimentConfig["agents"][number];

/** One worker group: the shared weights and the agents acting with them. */
export interface WorkerGroup {
  readonly id: string;
  readonly model: string;
  readonly trainable: Agent["trainable"];
  readonly optimizer: Agent["optimizer"];
  readonly agents: readonly string[];
}

/** Agent id -> worker-group id under the config's policy (ids of a valid config only). */
export function assignWorkerGroups(config: ExperimentConfig): Record<string, string> {
  const policy = config.agent_to_wg;
  if (policy === "separate") return Object.fromEntries(config.agents.map((a) => [a.id, a.id]));
  if (policy === "shared") {
    // Named after the agents that share the model, joined in config order: readable and stable.
    const byModel = new Map<string, string[]>();
    for (const a of config.agents) byModel.set(a.model, [...(byModel.get(a.model) ?? []), a.id]);
    return Object.fromEntries(
      config.agents.map((a) => [a.id, byModel.get(a.model)!.join("+")]),
    );
  }
  return { ...policy };
}

/** Issues with an explicit map: unknown agents and agents without a group. */
export function checkAgentMap(config: ExperimentConfig): ConfigIssue[] {
  const policy = config.agent_to_wg;
  if (typeof policy === "string") return [];
  const ids = config.agents.map((a) => a.id);
  const issues: ConfigIssue[] = [];
  for (const [agent, wg] of Object.entries(policy)) {
    if (!ids.includes(agent)) {
      issues.push({
        key: `agent_to_wg.${agent}`,
        value: wg,
        allowed: `keys that are agent ids (${ids.join(", ")})`,
      });
    }
  }
  for (const agent of ids) {
    if (!(agent in policy)) {
      issues.push({
        key: `agent_to_wg.${agent}`,
        value: undefined,
        allowed: "a worker-group id for every agent",
      });
    }
  }
  return issues;
}

/** Issues where agents in one worker group disagree on model, trainable part or optimizer. */
export function checkSharing(
  config: ExperimentConfig,
  assignment: Record<string, string>,
): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  const first = new Map<string, number>();
  config.agents.forEach((agent, i) => {
    const wg = assignment[agent.id];
    const j = first.get(wg);
    if (j === undefined) {
      first.set(wg, i);
      return;
    }
    const lead = config.agents[j];
    for (const field of ["model", "trainable", "optimizer"] as const) {
      if (JSON.stringify(agent[field]) !== JSON.stringify(lead[field])) {
        issues.push({
          key: `agents[${i}].${field}`,
          value: agent[field],
          allowed: `the same ${field} as agents[${j}] (${lead.id}), which shares worker group ` +
            `${JSON.stringify(wg)}; or give ${agent.id} its own group in agent_to_wg`,
        });
      }
    }
  });
  return issues;
}

/** The worker groups, in order of their first agent. */
export function workerGroups(
  config: ExperimentConfig,
  assignment: Record<string, string>,
): WorkerGroup[] {
  const groups = new Map<string, WorkerGroup>();
  for (const agent of config.agents) {
    const id = assignment[agent.id];
    const group = groups.get(id);
    groups.set(id, {
      id,
      model: agent.model,
      trainable: agent.trainable,
      optimizer: agent.optimizer,
      agents: [...(group?.agents ?? []), agent.id],
    });
  }
  return [...groups.values()];
}
