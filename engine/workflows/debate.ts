/**
 * MADA-RL's debate: N generators answer in parallel (round 0), then R-1 rounds of M critics, each
 * seeing the question and every answer of the previous round. The team's answer is the majority
 * of the last round's answers (ties go to the answer given first).
 */
import { gradeAnswer } from "../tasks/mod.ts";
import { parseAnswerText } from "./actions.ts";
import { renderPrompt } from "./template.ts";
import type { EpisodeTurn, Question, Speak, Workflow, WorkflowAgent } from "./types.ts";

/**
 * Builds the debate workflow. With `rounds` 1 or no critics it is a generators-only vote.
 * `configured` is how many generators and critics the config asks for (its role declaration);
 * by default as many as given.
 */
export function debateWorkflow(
  agents: { generators: readonly WorkflowAgent[]; critics: readonly WorkflowAgent[] },
  rounds: number,
  configured: { generators: number; critics: number } = {
    generators: agents.generators.length,
    critics: agents.critics.length,
  },
): Workflow {
  return Object.freeze({
    kind: "debate",
    roles: { generator: configured.generators, critic: configured.critics },
    // Every debater's prompt is rendered from the same two; {answers} is empty in round 0.
    placeholders: { generator: ["question", "answers"], critic: ["question", "answers"] },
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      let previous: EpisodeTurn<Extra>[] = [];
      const lastRound = agents.critics.length === 0 ? 0 : rounds - 1;
      for (let round = 0; round <= lastRound; round++) {
        const speakers = round === 0 ? agents.generators : agents.critics;
        const role = round === 0 ? "generator" : "critic";
        const answers = previous
          .map((t, i) => `Answer ${i + 1}: ${t.output.text}`)
          .join("\n");
        // Agents of one round act in parallel on the same inputs; turns are numbered in agent order.
        const first = turns.length;
        const outputs = await Promise.all(speakers.map((agent, i) => {
          const prompt = renderPrompt(agent.prompt, { question: question.problem, answers });
          return speak({ agent, turn: first + i, prompt }).then((output) => ({
            agent,
            prompt,
            output,
          }));
        }));
        previous = outputs.map(({ agent, prompt, output }, i) => {
          const answer = parseAnswerText(output.text);
          return {
            turn: first + i,
            round,
            agent: agent.id,
            role,
            prompt,
            output,
            action: { kind: "answer", answer },
            valid: answer !== null,
          } as const;
        });
        turns.push(...previous);
      }
      return Object.freeze({ turns, finalAnswer: majorityAnswer(previous) });
    },
  });
}

/**
 * The most frequent answer among the turns, counting mathematically equivalent answers as one
 * (`\frac{1}{2}` and `0.5` vote together); the answer given first wins ties; null when none
 * answered.
 */
export function majorityAnswer(turns: readonly EpisodeTurn[]): string | null {
  const clusters: { answer: string; votes: number }[] = [];
  for (const t of turns) {
    if (t.action.kind !== "answer" || t.action.answer === null) continue;
    const answer = t.action.answer;
    const cluster = clusters.find((c) =>
      c.answer === answer || gradeAnswer(c.answer, answer).equivalent
    );
    if (cluster) cluster.votes++;
    else clusters.push({ answer, votes: 1 });
  }
  let best: { answer: string; votes: number } | null = null;
  for (const c of clusters) if (best === null || c.votes > best.votes) best = c;
  return best?.answer ?? null;
}
