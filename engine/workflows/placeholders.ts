/**
 * The config's prompt templates checked against the placeholders a workflow declares it fills
 * (`Workflow.placeholders`, per role): a template that uses any other, a misspelt `{solutoin}`
 * say, is refused before the run starts, naming the template, the placeholder and the ones the
 * role's prompts may use, instead of failing mid-rollout when the prompt is first rendered.
 */
import { closestMatch } from "leven";
import type { ConfigIssue } from "../config/mod.ts";
import { RoleDeclarationError } from "./roles.ts";
import { PLACEHOLDER_NAME, templatePlaceholders } from "./template.ts";
import type { Workflow } from "./types.ts";

/**
 * Throws RoleDeclarationError unless `placeholders` maps every role `roles` gives agents to a
 * list of placeholder names (and names no other role); `origin` names where the declaration came
 * from (a module path), for the message.
 *
 * @example
 * ```ts
 * import { checkPlaceholderDeclaration } from "./placeholders.ts";
 * checkPlaceholderDeclaration({ planner: ["question"] }, { planner: 1 }, "flow.ts"); // ok
 * checkPlaceholderDeclaration(undefined, { planner: 1 }, "old.ts"); // throws
 * ```
 */
export function checkPlaceholderDeclaration(
  placeholders: unknown,
  roles: Workflow["roles"],
  origin: string,
): void {
  const fix = "declare placeholders as { role: [the names its prompts may use] }, e.g. " +
    '{ planner: ["question"], executor: ["question", "plan"] }';
  if (placeholders === null || typeof placeholders !== "object" || Array.isArray(placeholders)) {
    throw new RoleDeclarationError(
      `${origin}: the workflow's placeholders are ${JSON.stringify(placeholders)}; ${fix}`,
    );
  }
  const declared = placeholders as Record<string, unknown>;
  for (const [role, names] of Object.entries(declared)) {
    if (!Object.hasOwn(roles, role)) {
      throw new RoleDeclarationError(
        `${origin}: placeholders are declared for role ${role}, which is not one of the ` +
          `workflow's roles (${Object.keys(roles).join(", ")})`,
      );
    }
    if (!Array.isArray(names) || !names.every((n) => PLACEHOLDER_NAME.test(n))) {
      throw new RoleDeclarationError(
        `${origin}: role ${role}'s placeholders are ${JSON.stringify(names)}, not a list of ` +
          `names of lowercase letters and _; ${fix}`,
      );
    }
  }
  const missing = Object.keys(roles).filter((r) => roles[r] > 0 && !Object.hasOwn(declared, r));
  if (missing.length > 0) {
    throw new RoleDeclarationError(
      `${origin}: no placeholders are declared for role ${missing.join(", ")}; ${fix}`,
    );
  }
}

/**
 * The issues of the agents' prompt templates against `workflow.placeholders`, one per unknown
 * placeholder, keyed `agents[i].prompt`. An agent whose role the workflow does not declare is
 * left to the role check.
 *
 * @example
 * ```ts
 * import { placeholderIssues, refineWorkflow, type WorkflowAgent } from "./mod.ts";
 * declare const agents: { solver: WorkflowAgent; verifier: WorkflowAgent };
 * const refine = refineWorkflow(agents, 3);
 * placeholderIssues(refine, [{ id: "v", role: "verifier", prompt: "Check {solutoin}" }]);
 * // [{ key: "agents[0].prompt", value: "{solutoin}", allowed: "... (did you mean {solution}?) ..." }]
 * ```
 */
export function placeholderIssues(
  workflow: Pick<Workflow, "kind" | "placeholders">,
  agents: readonly { readonly id: string; readonly role: string; readonly prompt: string }[],
): ConfigIssue[] {
  return agents.flatMap((agent, i) => {
    if (!Object.hasOwn(workflow.placeholders, agent.role)) return [];
    const known = workflow.placeholders[agent.role];
    return templatePlaceholders(agent.prompt).filter((name) => !known.includes(name)).map(
      (name): ConfigIssue => {
        const near = closestMatch(name, [...known], { maxDistance: 2 });
        return {
          key: `agents[${i}].prompt`,
          value: `{${name}}`,
          allowed: `a placeholder the ${workflow.kind} workflow fills in role ${agent.role}'s ` +
            `prompts (agent ${agent.id}): ${
              known.length === 0 ? "none" : `one of ${known.map((k) => `{${k}}`).join(", ")}`
            }${near === undefined ? "" : ` (did you mean {${near}}?)`}; write {{ and }} for ` +
            "literal braces",
        };
      },
    );
  });
}
