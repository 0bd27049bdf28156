/**
 * Dr. MAS's math workflow: a solver proposes (or revises) a solution, a verifier accepts it or
 * asks for another round, for at most `maxLoops` solver turns. The final answer is the solver's
 * last answer, accepted or not. Solver templates get {question}, {previous} (its last solution),
 * {feedback} (the verifier's last review) and {revision} (both, labelled; empty on the first loop);
 * verifier templates get {question} and {solution}.
 */
import { parseAnswerText, parseVerdict } from "./actions.ts";
import { renderPrompt } from "./template.ts";
import { readAnswer, takeTurn } from "./turn.ts";
import type { EpisodeTurn, Question, Speak, Workflow, WorkflowAgent } from "./types.ts";

/** Builds the refine workflow over one solver and one verifier. */
export function refineWorkflow(
  agents: { solver: WorkflowAgent; verifier: WorkflowAgent },
  maxLoops: number,
): Workflow {
  return Object.freeze({
    kind: "refine",
    roles: { solver: 1, verifier: 1 },
    placeholders: {
      solver: ["question", "previous", "feedback", "revision"],
      verifier: ["question", "solution"],
    },
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      let solution = "";
      let feedback = "";
      let answer: string | null = null;
      for (let loop = 0; loop < maxLoops; loop++) {
        const proposed = await takeTurn(
          turns,
          speak,
          agents.solver,
          renderPrompt(agents.solver.prompt, {
            question: question.problem,
            previous: solution,
            feedback,
            // Empty on the first loop, so a first attempt sees exactly the bare question.
            revision: loop === 0 ? "" : `\n\nPrevious attempt: ${solution}\nReviewer: ${feedback}`,
          }),
          readAnswer(parseAnswerText),
        );
        solution = proposed.output.text;
        answer = proposed.action.kind === "answer" ? proposed.action.answer : null;
        // The last solver turn is final whatever a verifier would say, so none is asked.
        if (loop === maxLoops - 1) break;
        const review = await takeTurn(
          turns,
          speak,
          agents.verifier,
          renderPrompt(agents.verifier.prompt, { question: question.problem, solution }),
          (text) => {
            const verdict = parseVerdict(text);
            return {
              action: { kind: "verdict", accept: verdict === true },
              valid: verdict !== null,
            };
          },
        );
        if (review.action.kind === "verdict" && review.action.accept) break;
        feedback = review.output.text;
      }
      return Object.freeze({ turns, finalAnswer: answer });
    },
  });
}
