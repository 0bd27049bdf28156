/**
 * A workflow's reward hooks (`Workflow.rewards`) checked when it is built: each names one of the
 * workflow's roles and is a function, so a module's typo fails before the run starts instead of
 * leaving a role silently on the default reward.
 */
import { RoleDeclarationError } from "./roles.ts";
import type { Workflow } from "./types.ts";

/**
 * Throws RoleDeclarationError unless `rewards` is absent or maps roles the workflow declares to
 * functions; `origin` names where the declaration came from (a module path), for the message.
 *
 * @example
 * ```ts
 * import { checkRoleRewardDeclaration } from "./role-rewards.ts";
 * checkRoleRewardDeclaration({ planner: () => 1 }, { planner: 1 }, "flow.ts"); // ok
 * checkRoleRewardDeclaration({ planer: () => 1 }, { planner: 1 }, "flow.ts"); // throws
 * ```
 */
export function checkRoleRewardDeclaration(
  rewards: unknown,
  roles: Workflow["roles"],
  origin: string,
): void {
  if (rewards === undefined) return;
  const fix = "declare rewards as { role: (input) => number }, e.g. " +
    "{ planner: ({ turn, trajectoryReward }) => turn.valid ? trajectoryReward : 0 }";
  if (rewards === null || typeof rewards !== "object" || Array.isArray(rewards)) {
    throw new RoleDeclarationError(
      `${origin}: the workflow's rewards are ${JSON.stringify(rewards)}; ${fix}`,
    );
  }
  for (const [role, hook] of Object.entries(rewards)) {
    if (!Object.hasOwn(roles, role)) {
      throw new RoleDeclarationError(
        `${origin}: a reward hook is declared for role ${role}, which is not one of the ` +
          `workflow's roles (${Object.keys(roles).join(", ")})`,
      );
    }
    if (typeof hook !== "function") {
      throw new RoleDeclarationError(
        `${origin}: role ${role}'s reward hook is ${JSON.stringify(hook)}, not a function; ${fix}`,
      );
    }
  }
}
