/** One sequential agent turn, the step every workflow but the parallel debate rounds repeats. */
import type { EpisodeTurn, Speak, TurnAction, WorkflowAgent } from "./types.ts";

/** How a workflow reads an agent's text: the action taken and whether it followed the format. */
export type ReadAction = (text: string) => { action: TurnAction; valid: boolean };

/**
 * Asks `agent` for the next turn of the episode, reads its action and appends the turn.
 *
 * @example
 * ```ts
 * import { parseAnswerText, takeTurn } from "./mod.ts";
 * import type { EpisodeTurn, Speak, WorkflowAgent } from "./types.ts";
 * declare const speak: Speak;
 * declare const solver: WorkflowAgent;
 * const turns: EpisodeTurn[] = [];
 * const prompt = "What is 2 + 3? Put the final answer in \\boxed{}.";
 * const t = await takeTurn(turns, speak, solver, prompt, (text) => {
 *   const answer = parseAnswerText(text);
 *   return { action: { kind: "answer", answer }, valid: answer !== null };
 * });
 * ```
 */
export async function takeTurn<Extra>(
  turns: EpisodeTurn<Extra>[],
  speak: Speak<Extra>,
  agent: WorkflowAgent,
  prompt: string,
  read: ReadAction,
): Promise<EpisodeTurn<Extra>> {
  const output = await speak({ agent, turn: turns.length, prompt });
  const { action, valid } = read(output.text);
  const turn = {
    turn: turns.length,
    agent: agent.id,
    role: agent.role,
    prompt,
    output,
    action,
    valid,
  };
  turns.push(turn);
  return turn;
}

/** Reads a final answer (boxed or "final answer is"); valid when there is one. */
export const readAnswer = (parse: (text: string) => string | null): ReadAction => (text) => {
  const answer = parse(text);
  return { action: { kind: "answer", answer }, valid: answer !== null };
};
