/**
 * An example custom workflow: a planner writes a plan (`plan: ...`), then two executors solve the
 * problem following it, the second seeing the first's work; `rounds` repeats the executors'
 * passes. The team's answer is the last executor answer given. Configs name this file in
 * `workflow.module` (see planner-executors.json beside it and the README's "A custom workflow").
 *
 * Prompt placeholders (declared, so the engine checks the config's templates before a run): the
 * planner gets {question}; executors get {question}, {plan} and {previous} (the other executors'
 * last outputs, empty on the first turn).
 *
 * Rewards: the executors earn the trajectory's reward (the default); the planner's reward hook
 * gives it the trajectory's reward only for a plan it wrote in the `plan:` format, and 0 for one
 * the executors had to read as plain text.
 *
 * @example
 * ```json
 * "workflow": { "kind": "custom", "module": "./planner-executors.ts", "params": { "rounds": 1 } }
 * ```
 */
import {
  type EpisodeTurn,
  parseAnswerText,
  type Question,
  readAnswer,
  renderPrompt,
  type RoleReward,
  type Speak,
  takeTurn,
  type Workflow,
  type WorkflowAgent,
  WorkflowConfigError,
} from "../mod.ts";

/** The text after the last `plan:` (to the end of the text), or null when there is none. */
export function parsePlan(text: string): string | null {
  const at = text.toLowerCase().lastIndexOf("plan:");
  const plan = at < 0 ? "" : text.slice(at + "plan:".length).trim();
  return plan.length > 0 ? plan : null;
}

/** A plan earns its trajectory's reward only when it was written in the `plan:` format. */
export const plannerReward: RoleReward = ({ turn, trajectoryReward }) =>
  turn.valid ? trajectoryReward : 0;

/** `params.rounds`: an integer 1..4, default 1; anything else is a config mistake. */
function roundsParam(params: Readonly<Record<string, unknown>>): number {
  const unknown = Object.keys(params).filter((k) => k !== "rounds");
  if (unknown.length > 0) {
    throw new WorkflowConfigError(
      `planner-executors: workflow.params has ${unknown.join(", ")}; it takes only rounds`,
    );
  }
  const rounds = params.rounds ?? 1;
  if (!Number.isInteger(rounds) || (rounds as number) < 1 || (rounds as number) > 4) {
    throw new WorkflowConfigError(
      `planner-executors: workflow.params.rounds is ${JSON.stringify(rounds)}; use an integer ` +
        `from 1 to 4 (executor passes)`,
    );
  }
  return rounds as number;
}

/**
 * Builds the workflow from the config's agents: one with role `planner`, two with `executor`
 * (the engine checks the counts against `roles` before the run starts).
 *
 * @example
 * ```ts
 * import type { Question, Speak, WorkflowAgent } from "../mod.ts";
 * import plannerExecutors from "./planner-executors.ts";
 * declare const agents: readonly WorkflowAgent[];
 * declare const question: Question;
 * declare const speak: Speak;
 * const workflow = plannerExecutors(agents, { rounds: 1 });
 * const episode = await workflow.run(question, speak); // 3 turns: planner, executor, executor
 * ```
 */
export default function plannerExecutors(
  agents: readonly WorkflowAgent[],
  params: Readonly<Record<string, unknown>>,
): Workflow {
  const rounds = roundsParam(params);
  // Picked by role; a config without exactly these roles fails the engine's check of `roles`.
  const [planner] = agents.filter((a) => a.role === "planner");
  const executors = agents.filter((a) => a.role === "executor");
  return Object.freeze({
    kind: "planner-executors",
    roles: { planner: 1, executor: 2 },
    placeholders: { planner: ["question"], executor: ["question", "plan", "previous"] },
    rewards: { planner: plannerReward },
    async run<Extra>(question: Question, speak: Speak<Extra>) {
      const turns: EpisodeTurn<Extra>[] = [];
      const planned = await takeTurn(
        turns,
        speak,
        planner,
        renderPrompt(planner.prompt, { question: question.problem }),
        (text) => {
          const plan = parsePlan(text);
          return { action: { kind: "custom", name: "plan", data: { plan } }, valid: plan !== null };
        },
      );
      // An unreadable plan is passed on as written: the executors may still solve the problem.
      const plan = planned.output.text;
      let finalAnswer: string | null = null;
      const last = new Map<string, string>();
      for (let round = 0; round < rounds; round++) {
        for (const executor of executors) {
          const previous = [...last].filter(([id]) => id !== executor.id)
            .map(([id, text]) => `${id}: ${text}`).join("\n");
          const done = await takeTurn(
            turns,
            speak,
            executor,
            renderPrompt(executor.prompt, { question: question.problem, plan, previous }),
            readAnswer(parseAnswerText),
          );
          last.set(executor.id, done.output.text);
          if (done.action.kind === "answer" && done.action.answer !== null) {
            finalAnswer = done.action.answer;
          }
        }
      }
      return Object.freeze({ turns, finalAnswer });
    },
  });
}
