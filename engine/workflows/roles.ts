/**
 * The config's agents checked against the roles a workflow declares (`Workflow.roles`): every
 * agent's role is one the workflow gives turns to, and each role has exactly the declared number
 * of agents. Built-in and custom workflows are checked alike, so a custom module's typo in a role
 * fails before the run starts instead of leaving an agent that never speaks.
 */
import type { ConfigIssue } from "../config/mod.ts";
import { WorkflowConfigError } from "./custom-module.ts";
import type { Workflow } from "./types.ts";

/** The workflow's role declaration is not a record of role -> agent count. */
export class RoleDeclarationError extends WorkflowConfigError {
  override name = "RoleDeclarationError";
}

/**
 * Throws RoleDeclarationError unless `roles` maps role names to non-negative integer counts;
 * `origin` names where the declaration came from (a module path), for the message.
 *
 * @example
 * ```ts
 * import { checkRoleDeclaration } from "./roles.ts";
 * checkRoleDeclaration({ planner: 1, executor: 2 }, "planner-executors.ts"); // ok
 * checkRoleDeclaration(["planner"], "old.ts"); // throws RoleDeclarationError
 * ```
 */
export function checkRoleDeclaration(roles: unknown, origin: string): void {
  const fix = "declare roles as { role: number of agents }, e.g. { planner: 1, executor: 2 }";
  if (roles === null || typeof roles !== "object" || Array.isArray(roles)) {
    throw new RoleDeclarationError(
      `${origin}: the workflow's roles are ${JSON.stringify(roles)}; ${fix}`,
    );
  }
  for (const [role, count] of Object.entries(roles)) {
    if (!Number.isSafeInteger(count) || (count as number) < 0) {
      throw new RoleDeclarationError(
        `${origin}: role ${role} has count ${JSON.stringify(count)}, not a non-negative ` +
          `integer; ${fix}`,
      );
    }
  }
}

/**
 * The issues of `agents` against `workflow.roles` (roles declared with count 0 accept no agent),
 * keyed like the config's own issues (`agents[i].role`, `agents`).
 *
 * @example
 * ```ts
 * import { refineWorkflow, roleIssues, type WorkflowAgent } from "./mod.ts";
 * declare const agents: { solver: WorkflowAgent; verifier: WorkflowAgent };
 * roleIssues(refineWorkflow(agents, 3), [{ id: "s", role: "solver" }]);
 * // [{ key: "agents", allowed: "exactly 1 agent(s) with role verifier ... (found 0)", ... }]
 * ```
 */
export function roleIssues(
  workflow: Pick<Workflow, "kind" | "roles">,
  agents: readonly { readonly id: string; readonly role: string }[],
): ConfigIssue[] {
  const needed = workflow.roles;
  const kind = workflow.kind;
  const known = Object.keys(needed).filter((r) => needed[r] > 0);
  const issues: ConfigIssue[] = [];
  agents.forEach((a, i) => {
    if (!known.includes(a.role)) {
      issues.push({
        key: `agents[${i}].role`,
        value: a.role,
        allowed: `one of ${known.join(", ")} for a ${kind} workflow`,
      });
    }
  });
  for (const role of known) {
    const found = agents.filter((a) => a.role === role).length;
    if (found !== needed[role]) {
      issues.push({
        key: "agents",
        value: agents.map((a) => `${a.id}:${a.role}`),
        allowed: `exactly ${needed[role]} agent(s) with role ${role} for this ${kind} workflow ` +
          `(found ${found})`,
      });
    }
  }
  return issues;
}
