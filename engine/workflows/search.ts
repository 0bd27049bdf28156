/**
 * Dr. MAS's search workflow: a verifier-led hierarchy. Each turn the verifier routes either to
 * the searcher (which writes `query: ...`; the retriever's top documents join the evidence) or to
 * the answerer, who gives the final answer. After `maxTurns` verifier turns the answerer is
 * called regardless.
 */
import { parseAnswerText, parseQuery, parseRoute } from "./actions.ts";
import { renderPrompt } from "./template.ts";
import { readAnswer, takeTurn } from "./turn.ts";
import type { EpisodeTurn, Question, Speak, Workflow, WorkflowAgent } from "./types.ts";

/** Finds the documents that best match a query. */
export interface Retriever {
  search(query: string, topK: number): readonly string[];
}

/** Builds the search workflow. */
export function searchWorkflow(
  agents: { verifier: WorkflowAgent; searcher: WorkflowAgent; answerer: WorkflowAgent },
  options: { maxTurns: number; topK: number; retriever: Retriever },
): Workflow {
  return Object.freeze({
    kind: "search",
    roles: { verifier: 1, searcher: 1, answerer: 1 },
    placeholders: {
      verifier: ["question", "evidence"],
      searcher: ["question", "evidence"],
      answerer: ["question", "evidence"],
    },
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      const evidence: string[] = [];
      const prompt = (agent: WorkflowAgent) =>
        renderPrompt(agent.prompt, {
          question: question.problem,
          evidence: evidence.map((d, i) => `[${i + 1}] ${d}`).join("\n"),
        });
      for (let round = 0; round < options.maxTurns; round++) {
        const routed = await takeTurn(
          turns,
          speak,
          agents.verifier,
          prompt(agents.verifier),
          (text) => {
            const route = parseRoute(text);
            // An unreadable route counts as "search": more evidence never ends an episode early.
            return { action: { kind: "route", to: route ?? "search" }, valid: route !== null };
          },
        );
        if (routed.valid && routed.action.kind === "route" && routed.action.to === "answer") break;
        await takeTurn(turns, speak, agents.searcher, prompt(agents.searcher), (text) => {
          const query = parseQuery(text);
          const found = query === null ? [] : options.retriever.search(query, options.topK);
          for (const doc of found) if (!evidence.includes(doc)) evidence.push(doc);
          return {
            action: { kind: "query", query: query ?? "", evidence: found },
            valid: query !== null,
          };
        });
      }
      const answered = await takeTurn(
        turns,
        speak,
        agents.answerer,
        prompt(agents.answerer),
        readAnswer(parseAnswerText),
      );
      const finalAnswer = answered.action.kind === "answer" ? answered.action.answer : null;
      return Object.freeze({ turns, finalAnswer });
    },
  });
}
