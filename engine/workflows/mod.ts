/**
 * Workflows (Dr. MAS "orchestras"): refine (solver + verifier), search (verifier + searcher +
 * answerer) and debate (MADA-RL generators + critics), built from an experiment config, and
 * everything a custom workflow module needs: the turn helper, the action parsers, prompt
 * templates and the types, reward hooks included (examples/planner-executors.ts is one such
 * module).
 *
 * @example
 * ```ts
 * import type { ExperimentConfig } from "../config/mod.ts";
 * import { buildWorkflow, type Question, type Speak } from "./mod.ts";
 * declare const config: ExperimentConfig;
 * declare const question: Question;
 * declare const speak: Speak;
 * const workflow = await buildWorkflow(config);
 * const episode = await workflow.run(question, speak);
 * ```
 */
import { ConfigError, type ExperimentConfig } from "../config/mod.ts";
import { loadWorkflowFactory, WorkflowConfigError } from "./custom-module.ts";
import { debateWorkflow } from "./debate.ts";
import { checkPlaceholderDeclaration, placeholderIssues } from "./placeholders.ts";
import { refineWorkflow } from "./refine.ts";
import { checkRoleRewardDeclaration } from "./role-rewards.ts";
import { checkRoleDeclaration, roleIssues } from "./roles.ts";
import { type Retriever, searchWorkflow } from "./search.ts";
import type { Workflow, WorkflowAgent } from "./types.ts";

export type * from "./types.ts";
export { parseAnswerText, parseQuery, parseRoute, parseVerdict } from "./actions.ts";
export {
  loadWorkflowFactory,
  WorkflowConfigError,
  type WorkflowFactory,
  type WorkflowModuleSource,
  workflowModuleSource,
} from "./custom-module.ts";
export { majorityAnswer } from "./debate.ts";
export { checkPlaceholderDeclaration, placeholderIssues } from "./placeholders.ts";
export { checkRoleRewardDeclaration } from "./role-rewards.ts";
export { checkRoleDeclaration, RoleDeclarationError, roleIssues } from "./roles.ts";
export { PromptTemplateError, renderPrompt, templatePlaceholders } from "./template.ts";
export { type ReadAction, readAnswer, takeTurn } from "./turn.ts";
export { debateWorkflow, refineWorkflow, type Retriever, searchWorkflow };

/**
 * Builds the configured workflow and checks what it declares: the config's agents against its
 * roles, their prompt templates against its placeholders (a ConfigError listing every mismatch),
 * and its reward hooks; `search` needs a retriever over the task's documents.
 */
export async function buildWorkflow(
  config: Pick<ExperimentConfig, "workflow" | "agents">,
  retriever?: Retriever,
): Promise<Workflow> {
  const agents: WorkflowAgent[] = config.agents.map((a) => ({
    id: a.id,
    role: a.role,
    prompt: a.prompt,
  }));
  const workflow = await construct(config.workflow, agents, retriever);
  const origin = config.workflow.kind === "custom"
    ? `workflow.module ${config.workflow.module}`
    : `the ${workflow.kind} workflow`;
  checkRoleDeclaration(workflow.roles, origin);
  checkPlaceholderDeclaration(workflow.placeholders, workflow.roles, origin);
  checkRoleRewardDeclaration(workflow.rewards, workflow.roles, origin);
  const issues = [...roleIssues(workflow, agents), ...placeholderIssues(workflow, agents)];
  if (issues.length > 0) throw new ConfigError(origin, issues);
  return workflow;
}

// Built-in workflows pick their agents by role here; a wrong or missing role is reported by the
// role check that follows, before any turn is taken.
async function construct(
  w: ExperimentConfig["workflow"],
  agents: readonly WorkflowAgent[],
  retriever: Retriever | undefined,
): Promise<Workflow> {
  const byRole = (role: string) => agents.filter((a) => a.role === role);
  const one = (role: string) => byRole(role)[0];
  switch (w.kind) {
    case "refine":
      return refineWorkflow({ solver: one("solver"), verifier: one("verifier") }, w.max_loops);
    case "debate":
      return debateWorkflow(
        { generators: byRole("generator"), critics: byRole("critic") },
        w.rounds,
        { generators: w.generators, critics: w.critics },
      );
    case "search":
      if (!retriever) {
        throw new WorkflowConfigError(
          "the search workflow needs a retriever: use tasks of kind synthetic-search, " +
            "whose documents the retriever indexes",
        );
      }
      return searchWorkflow(
        { verifier: one("verifier"), searcher: one("searcher"), answerer: one("answerer") },
        { maxTurns: w.max_turns, topK: w.top_k, retriever },
      );
    case "custom":
      return (await loadWorkflowFactory(w.module))(agents, w.params);
  }
}
