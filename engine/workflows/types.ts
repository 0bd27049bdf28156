/**
 * The orchestra interface (Dr. MAS "pluggable orchestra"): a workflow decides which agent acts
 * next from the state and previous outputs, and asks a `Speak` function for that agent's turn.
 * Workflows never touch models, randomness or the log: the trainer supplies `speak`, which keys
 * every draw by the turn's coordinates, so a workflow's trace is a pure function of its inputs.
 */

/** One problem a workflow works on. */
export interface Question {
  readonly id: string;
  readonly problem: string;
  /** The gold answer; workflows never read it (only rewards do). */
  readonly answer: string;
}

/** An agent as a workflow sees it: an id, its role, and its prompt template. */
export interface WorkflowAgent {
  readonly id: string;
  readonly role: string;
  readonly prompt: string;
}

/** What a workflow asks of one agent. */
export interface TurnRequest {
  readonly agent: WorkflowAgent;
  /** Position of this turn in the episode, unique within it. */
  readonly turn: number;
  /** The rendered prompt. */
  readonly prompt: string;
}

/** What an agent said; `extra` carries the model's token-level record through the workflow. */
export interface TurnOutput<Extra = unknown> {
  readonly text: string;
  readonly extra: Extra;
}

/** Produces one agent turn (a model call in training; a scripted reply in unit tests). */
export type Speak<Extra = unknown> = (request: TurnRequest) => Promise<TurnOutput<Extra>>;

/**
 * An action a workflow defines for itself (a plan, a tool call): its name and what it carried.
 * Only `answer` actions are graded; a custom action earns its trajectory's reward like any
 * other turn (minus the invalid-action penalty when it did not follow its format).
 */
export interface CustomAction {
  readonly kind: "custom";
  readonly name: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/** The action a turn took, as the workflow parsed it. */
export type TurnAction =
  | { readonly kind: "answer"; readonly answer: string | null }
  | { readonly kind: "verdict"; readonly accept: boolean }
  | { readonly kind: "route"; readonly to: "search" | "answer" }
  | { readonly kind: "query"; readonly query: string; readonly evidence: readonly string[] }
  | CustomAction;

/** One recorded turn of an episode. */
export interface EpisodeTurn<Extra = unknown> {
  readonly turn: number;
  readonly agent: string;
  readonly role: string;
  readonly prompt: string;
  readonly output: TurnOutput<Extra>;
  readonly action: TurnAction;
  /** False when the output did not follow the role's action format (Dr. MAS invalid action). */
  readonly valid: boolean;
  /** Debate round (0 = generators); absent for other workflows. */
  readonly round?: number;
}

/** A finished episode: every turn in order and the team's final answer. */
export interface Episode<Extra = unknown> {
  readonly turns: readonly EpisodeTurn<Extra>[];
  readonly finalAnswer: string | null;
}

/**
 * A workflow: the roles it needs and how it runs one question.
 *
 * @example
 * ```ts
 * import { parseAnswerText, readAnswer, takeTurn } from "./mod.ts";
 * import type { EpisodeTurn, Question, Speak, Workflow, WorkflowAgent } from "./types.ts";
 * const solo = (solver: WorkflowAgent): Workflow => ({
 *   kind: "solo",
 *   roles: { solver: 1 },
 *   placeholders: { solver: [] }, // its prompt is the bare problem, no template filled
 *   async run<Extra>(question: Question, speak: Speak<Extra>) {
 *     const turns: EpisodeTurn<Extra>[] = [];
 *     const read = readAnswer(parseAnswerText);
 *     const t = await takeTurn(turns, speak, solver, question.problem, read);
 *     return { turns, finalAnswer: t.action.kind === "answer" ? t.action.answer : null };
 *   },
 * });
 * ```
 */
export interface Workflow {
  readonly kind: string;
  /**
   * Each role this workflow gives turns to and exactly how many agents of it a config must
   * provide (0: the role is unused in this configuration); buildWorkflow checks the config's
   * agents against it before a run starts.
   */
  readonly roles: Readonly<Record<string, number>>;
  /**
   * The placeholders each role's prompt templates may use: the names the workflow fills when it
   * renders that role's prompts. buildWorkflow checks every agent's template against its role's
   * before a run starts, so a misspelt `{solutoin}` never reaches a rollout.
   */
  readonly placeholders: Readonly<Record<string, readonly string[]>>;
  /**
   * Optional reward hooks by role: each gives the reward of one of that role's turns, in place
   * of the trajectory reward scheme's (the trajectory's reward, less the invalid-action
   * penalty). Roles without a hook keep the scheme's.
   */
  readonly rewards?: Readonly<Record<string, RoleReward>>;
  run<Extra>(question: Question, speak: Speak<Extra>): Promise<Episode<Extra>>;
}

/** What a role's reward hook is given: one of the role's turns and the trajectory it is part of. */
export interface RoleRewardInput {
  readonly turn: EpisodeTurn;
  readonly episode: Episode;
  /** Whether the episode's final answer is equivalent to the gold answer. */
  readonly correct: boolean;
  /** The trajectory's reward under `rewards.weights`: what the turn earns without a hook. */
  readonly trajectoryReward: number;
}

/**
 * A role's reward for one of its turns: a finite number, a pure function of its input (replay
 * recomputes it).
 *
 * @example
 * ```ts
 * import type { RoleReward } from "./types.ts";
 * const planner: RoleReward = ({ turn, trajectoryReward }) => turn.valid ? trajectoryReward : 0;
 * ```
 */
export type RoleReward = (input: RoleRewardInput) => number;
