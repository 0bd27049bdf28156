/**
 * Dr. MAS's search workflow: a verifier-led hierarchy. Each turn the verifier routes either to
 * the searcher (which writes `query: ...`; the retriever's top documents join the evidence) or to
 * the answerer, who gives the final answer. After `maxTurns` verifier turns the answerer is
 * called regardless.
 */
import { parseAnswer, parseQuery, parseRoute } from "./actions.ts";
import { renderPrompt } from "./template.ts";
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
    roles: ["verifier", "searcher", "answerer"],
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      const evidence: string[] = [];
      const context = () => ({
        question: question.problem,
        evidence: evidence.map((d, i) => `[${i + 1}] ${d}`).join("\n"),
      });
      for (let round = 0; round < options.maxTurns; round++) {
        const routePrompt = renderPrompt(agents.verifier.prompt, context());
        const routed = await speak({
          agent: agents.verifier,
          turn: turns.length,
          prompt: routePrompt,
        });
        const route = parseRoute(routed.text);
        turns.push({
          turn: turns.length,
          agent: agents.verifier.id,
          role: "verifier",
          prompt: routePrompt,
          output: routed,
          // An unreadable route is treated as "search": more evidence never ends an episode early.
          action: { kind: "route", to: route ?? "search" },
          valid: route !== null,
        });
        if (route === "answer") break;
        const queryPrompt = renderPrompt(agents.searcher.prompt, context());
        const asked = await speak({
          agent: agents.searcher,
          turn: turns.length,
          prompt: queryPrompt,
        });
        const query = parseQuery(asked.text);
        const found = query === null ? [] : options.retriever.search(query, options.topK);
        for (const doc of found) if (!evidence.includes(doc)) evidence.push(doc);
        turns.push({
          turn: turns.length,
          agent: agents.searcher.id,
          role: "searcher",
          prompt: queryPrompt,
          output: asked,
          action: { kind: "query", query: query ?? "", evidence: found },
          valid: query !== null,
        });
      }
      const answerPrompt = renderPrompt(agents.answerer.prompt, context());
      const answered = await speak({
        agent: agents.answerer,
        turn: turns.length,
        prompt: answerPrompt,
      });
      const answer = parseAnswer(answered.text);
      turns.push({
        turn: turns.length,
        agent: agents.answerer.id,
        role: "answerer",
        prompt: answerPrompt,
        output: answered,
        action: { kind: "answer", answer },
        valid: answer !== null,
      });
      return Object.freeze({ turns, finalAnswer: answer });
    },
  });
}
