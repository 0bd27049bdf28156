/**
 * Workflows (Dr. MAS "orchestras"): refine (solver + verifier), search (verifier + searcher +
 * answerer) and debate (MADA-RL generators + critics), built from an experiment config.
 *
 * @example
 * ```ts
 * import { buildWorkflow } from "./mod.ts";
 * const workflow = await buildWorkflow(config);
 * const episode = await workflow.run(question, speak);
 * ```
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { ExperimentConfig } from "../config/schema.ts";
import { debateWorkflow } from "./debate.ts";
import { refineWorkflow } from "./refine.ts";
import { type Retriever, searchWorkflow } from "./search.ts";
import type { Workflow, WorkflowAgent } from "./types.ts";

export type * from "./types.ts";
export { parseAnswer, parseQuery, parseRoute, parseVerdict } from "./actions.ts";
export { majorityAnswer } from "./debate.ts";
export { PromptTemplateError, renderPrompt } from "./template.ts";
export { debateWorkflow, refineWorkflow, type Retriever, searchWorkflow };

/** A custom workflow module's default export. */
export type WorkflowFactory = (
  agents: readonly WorkflowAgent[],
  params: Readonly<Record<string, unknown>>,
) => Workflow;

/** The workflow cannot be built from the config (missing retriever, bad custom module). */
export class WorkflowConfigError extends Error {
  override name = "WorkflowConfigError";
}

/**
 * Builds the configured workflow. Role counts were checked when the config was parsed; `search`
 * needs a retriever over the task's documents.
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
  const byRole = (role: string) => agents.filter((a) => a.role === role);
  const one = (role: string) => byRole(role)[0];
  const w = config.workflow;
  switch (w.kind) {
    case "refine":
      return refineWorkflow({ solver: one("solver"), verifier: one("verifier") }, w.max_loops);
    case "debate":
      return debateWorkflow(
        { generators: byRole("generator"), critics: byRole("critic") },
        w.rounds,
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
    case "custom": {
      const url = pathToFileURL(resolve(w.module)).href;
      const module = await import(url).catch((err: Error) => {
        throw new WorkflowConfigError(
          `workflow.module ${w.module} cannot be loaded: ${err.message}`,
        );
      });
      if (typeof module.default !== "function") {
        throw new WorkflowConfigError(
          `workflow.module ${w.module} must default-export a function (agents, params) => Workflow`,
        );
      }
      return (module.default as WorkflowFactory)(agents, w.params);
    }
  }
}
