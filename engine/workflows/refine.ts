/**
 * Dr. MAS's math workflow: a solver proposes (or revises) a solution, a verifier accepts it or
 * asks for another round, for at most `maxLoops` solver turns. The final answer is the solver's
 * last answer, accepted or not. Solver templates get {question}, {previous} (its last solution),
 * {feedback} (the verifier's last review) and {revision} (both, labelled; empty on the first loop);
 * verifier templates get {question} and {solution}.
 */
import { parseAnswer, parseVerdict } from "./actions.ts";
import { renderPrompt } from "./template.ts";
import type { EpisodeTurn, Question, Speak, Workflow, WorkflowAgent } from "./types.ts";

/** Builds the refine workflow over one solver and one verifier. */
export function refineWorkflow(
  agents: { solver: WorkflowAgent; verifier: WorkflowAgent },
  maxLoops: number,
): Workflow {
  return Object.freeze({
    kind: "refine",
    roles: ["solver", "verifier"],
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      let solution = "";
      let feedback = "";
      let answer: string | null = null;
      for (let loop = 0; loop < maxLoops; loop++) {
        const solverPrompt = renderPrompt(agents.solver.prompt, {
          question: question.problem,
          previous: solution,
          feedback,
          // Empty on the first loop, so a first attempt sees exactly the bare question.
          revision: loop === 0 ? "" : `\n\nPrevious attempt: ${solution}\nReviewer: ${feedback}`,
        });
        const proposed = await speak({
          agent: agents.solver,
          turn: turns.length,
          prompt: solverPrompt,
        });
        solution = proposed.text;
        answer = parseAnswer(solution);
        turns.push({
          turn: turns.length,
          agent: agents.solver.id,
          role: "solver",
          prompt: solverPrompt,
          output: proposed,
          action: { kind: "answer", answer },
          valid: answer !== null,
        });
        // The last solver turn is final whatever a verifier would say, so none is asked.
        if (loop === maxLoops - 1) break;
        const verifierPrompt = renderPrompt(agents.verifier.prompt, {
          question: question.problem,
          solution,
        });
        const review = await speak({
          agent: agents.verifier,
          turn: turns.length,
          prompt: verifierPrompt,
        });
        const verdict = parseVerdict(review.text);
        turns.push({
          turn: turns.length,
          agent: agents.verifier.id,
          role: "verifier",
          prompt: verifierPrompt,
          output: review,
          action: { kind: "verdict", accept: verdict === true },
          valid: verdict !== null,
        });
        if (verdict === true) break;
        feedback = review.text;
      }
      return Object.freeze({ turns, finalAnswer: answer });
    },
  });
}
