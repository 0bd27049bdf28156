/**
 * The embedded model's pretraining corpus: synthetic arithmetic in the exact formats the refine
 * and debate presets use, and the search preset's turns (engine/pretrain/search-corpus.ts),
 * packed into fixed-length rows.
 *
 * A solution evaluates one operation at a time and boxes the value, `$13 - (-16) = 29$.
 * \boxed{29}` for `13 - (1 - 17)`: each step is a two-operand fact a small model can learn, where
 * the direct answer needs the whole computation in one token (measured: 5% after 400 steps).
 * Five kinds of item, each a pure function of `(seed, item index)`:
 * - `solve`: the solver's first turn, the bare problem in the chat template -> a solution;
 * - `revise`: a later solver turn (the problem, a wrong previous solution and the verifier's
 *   `verdict: revise`) -> a solution;
 * - `verify`: the verifier prompt with a right or a wrong solution, half each -> its own working,
 *   then `verdict: accept` or `verdict: revise`;
 * - `critique`: the debate critic prompt with three previous solutions, each right or wrong ->
 *   a solution;
 * - `drill`: one line `$expression$: solution`. Chat items spend ~150 tokens of prompt per
 *   solution; drills carry the same computation in ~45, so most of the arithmetic is learned from
 *   them at a third of the cost;
 * - `route`, `query`, `answer`: the search preset's router, searcher and answerer turns, one
 *   state of a one- or two-hop episode each (search-corpus.ts).
 * Rows start with an item at position 0 (as every prompt does at RL time) and hold whole items
 * only; the loss covers answers (and the closing `<|im_end|>`), never prompts.
 */
import type { HfTokenizer } from "../../adapters/hf/mod.ts";
import type { SupervisedExample } from "../../adapters/model/mod.ts";
import { PRESET_PROMPTS } from "../config/mod.ts";
import { randomStream, uniformInt } from "../random/mod.ts";
import { type ArithmeticTask, taskExpression, workingSteps } from "../tasks/arithmetic/mod.ts";
import { renderPrompt } from "../workflows/mod.ts";
import {
  copyDrillText,
  episodeStates,
  lookupDrillText,
  personAsked,
  SEARCH_WORLDS,
  type SearchItemKind,
  searchItemText,
  type SearchState,
  type SearchWorldPool,
} from "./search-corpus.ts";

/** The arithmetic turns an item teaches (the refine and debate presets' formats, and drills). */
export type ArithmeticKind = "solve" | "revise" | "verify" | "critique" | "drill";

/** What an item teaches (`lookup`, `copy`: the search turns' copying as drills, search-corpus.ts). */
export type ItemKind = ArithmeticKind | SearchItemKind | "lookup" | "copy";

/** Relative frequency of each kind among drawn items (their token shares differ by length). */
export type Mixture = Readonly<Record<ItemKind, number>>;

/**
 * The first phase, arithmetic only. Items per 100 draws: ~31% of tokens drills, ~30% solver, ~22%
 * verifier, ~16% critic turns.
 */
export const ARITHMETIC_MIXTURE: Mixture = Object.freeze({
  drill: 78,
  solve: 11,
  revise: 3,
  verify: 5,
  critique: 3,
  route: 0,
  query: 0,
  answer: 0,
  lookup: 0,
  copy: 0,
});

/**
 * The second phase, continued from the first: the search turns join at about half of the
 * tokens (a search prompt is ~250 tokens for a ~30-token reply; a lookup drill ~110 for ~40),
 * and the arithmetic items keep their proportions so the refine and debate turns are rehearsed,
 * not forgotten. Lookup and copy drills are most of the search items: without them (route 8,
 * query 7, answer 5) 350 steps learned the formats but never copied a name; with them, from the
 * arithmetic model, 400 steps did not either (searcher 0%, answerer 1.6%). After the `copy`
 * warm-up, 800 + 600 steps of this mixture made the committed model (README, "The embedded
 * model").
 */
export const SEARCH_MIXTURE: Mixture = Object.freeze({
  drill: 39,
  solve: 6,
  revise: 2,
  verify: 3,
  critique: 2,
  route: 3,
  query: 4,
  answer: 4,
  lookup: 15,
  copy: 25,
});

/**
 * Copy drills only: a warm-up before `search` (short rows suffice, `--row-length 128`). From the
 * committed model, 16 rows of 128 tokens at lr 0.001 copied no name exactly after 300 steps,
 * 13 of 32 after 400 and 31 of 32 after 500: the induction pattern forms only from many more
 * copies than the search mixture carries.
 */
export const COPY_MIXTURE: Mixture = Object.freeze({
  ...Object.fromEntries(Object.keys(SEARCH_MIXTURE).map((k) => [k, 0])) as Mixture,
  copy: 1,
});

/** The corpora `deno task pretrain --corpus` names. */
export const MIXTURES: Readonly<Record<string, Mixture>> = Object.freeze({
  arithmetic: ARITHMETIC_MIXTURE,
  search: SEARCH_MIXTURE,
  copy: COPY_MIXTURE,
});

/** One tokenized item: tokens[t] is a loss target for every t in a span [from, to). */
export interface CorpusItem {
  readonly kind: ItemKind;
  readonly tokens: readonly number[];
  readonly lossSpans: readonly (readonly [number, number])[];
}

/** A wrong answer near the right one (an integer off by 1-10), or another task's answer. */
export function wrongAnswer(
  answer: string,
  draw: (min: number, max: number) => number,
  other: string,
): string {
  if (!/^-?\d+$/.test(answer)) return other === answer ? `${answer}+1` : other;
  const offset = BigInt(draw(1, 10)) * (draw(0, 1) === 0 ? -1n : 1n);
  return String(BigInt(answer) + offset);
}

/**
 * A task's step-by-step solution ending in `\boxed{answer}`; with a wrong `answer`, the steps
 * are right up to the last, which gives the wrong value.
 *
 * @example
 * ```ts
 * import { generateArithmeticTasks } from "../tasks/arithmetic/mod.ts";
 * import { solutionText } from "./corpus.ts";
 *
 * const [task] = generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 1 });
 * solutionText(task); // "$13 - (-16) = 29$. \\boxed{29}" (the problem: $13 - (1 - 17)$)
 * solutionText(task, "30"); // "$13 - (-16) = 30$. \\boxed{30}"
 * ```
 */
export function solutionText(task: ArithmeticTask, answer = task.answer): string {
  return `${working(task, answer)}. \\boxed{${answer}}`;
}

/** `$step = step = value$`; the value is `answer` (the last step is replaced when it is one). */
function working(task: ArithmeticTask, answer = task.answer): string {
  const steps = workingSteps(taskExpression(task));
  if (steps.at(-1) === task.answer) steps.pop();
  return `$${[...steps, answer].join(" = ")}$`;
}

/** The `$...$` expression of a problem statement. */
function expressionOf(problem: string): string {
  const match = /\$([^$]+)\$/.exec(problem);
  if (match === null) throw new Error(`no $...$ expression in problem: ${problem}`);
  return match[1];
}

/** The text an item is made of: a chat exchange (user prompt, assistant reply) or a drill line. */
export function itemText(
  kind: ArithmeticKind,
  task: ArithmeticTask,
  wrong: string,
  acceptRight: boolean,
  opinionsRight: readonly boolean[] = [],
): { prompt: string; reply: string; chat: boolean } {
  const solution = solutionText(task);
  switch (kind) {
    case "drill":
      return { prompt: `$${expressionOf(task.problem)}$: `, reply: `${solution}\n`, chat: false };
    case "solve":
      return { prompt: renderSolver(task, ""), reply: solution, chat: true };
    case "revise":
      return {
        prompt: renderSolver(
          task,
          `\n\nPrevious attempt: ${solutionText(task, wrong)}\nReviewer: verdict: revise`,
        ),
        reply: solution,
        chat: true,
      };
    case "verify":
      return {
        prompt: renderPrompt(PRESET_PROMPTS.verifier, {
          question: task.problem,
          solution: acceptRight ? solution : solutionText(task, wrong),
        }),
        reply: `${working(task)}. verdict: ${acceptRight ? "accept" : "revise"}`,
        chat: true,
      };
    case "critique":
      return {
        // The debate workflow's own rendering of the previous round (engine/workflows/debate.ts).
        prompt: renderPrompt(PRESET_PROMPTS.critic, {
          question: task.problem,
          answers: opinionsRight
            .map((right, i) => `Answer ${i + 1}: ${right ? solution : solutionText(task, wrong)}`)
            .join("\n"),
        }),
        reply: solution,
        chat: true,
      };
  }
}

function renderSolver(task: ArithmeticTask, revision: string): string {
  return renderPrompt(PRESET_PROMPTS.solver, { question: task.problem, revision });
}

/** Tokenizes an item; chat replies end with `<|im_end|>` (learned) and a newline (not). */
export function tokenizeItem(
  tokenizer: HfTokenizer,
  kind: ItemKind,
  text: { prompt: string; reply: string; chat: boolean },
): CorpusItem {
  const prompt = text.chat
    ? tokenizer.encodeChat([{ role: "user", content: text.prompt }])
    : tokenizer.encode(text.prompt, { addSpecialTokens: false });
  const reply = tokenizer.encode(text.chat ? `${text.reply}<|im_end|>` : text.reply, {
    addSpecialTokens: false,
  });
  const tail = text.chat ? tokenizer.encode("\n", { addSpecialTokens: false }) : [];
  return Object.freeze({
    kind,
    tokens: [...prompt, ...reply, ...tail],
    lossSpans: [[prompt.length, prompt.length + reply.length] as const],
  });
}

/** Where items come from: tasks by index (cycled by the caller) and the mixture's weights. */
export interface CorpusSource {
  readonly seed: number;
  readonly tokenizer: HfTokenizer;
  /** The training tasks, drawn from at random per item. */
  readonly tasks: readonly ArithmeticTask[];
  readonly mixture: Mixture;
  /** The search worlds' questions (and their hops, which the lookup drills follow); built from
   * searchWorldPool() when the mixture needs them. */
  readonly searchWorlds?: SearchWorldPool;
}

// Search kinds come last: an arithmetic-only mixture draws exactly what it drew before them.
const KINDS: readonly ItemKind[] = [
  "drill",
  "solve",
  "revise",
  "verify",
  "critique",
  "route",
  "query",
  "answer",
  "lookup",
  "copy",
];

/** Item `index` of the corpus: its kind, task and wrong answer all keyed by (seed, index). */
export function corpusItem(source: CorpusSource, index: number): CorpusItem {
  const stream = randomStream({ seed: source.seed, purpose: "pretrain-corpus", sample: index });
  let draws = 0;
  const draw = (min: number, max: number) => uniformInt(stream, draws++, min, max);
  const total = KINDS.reduce((sum, k) => sum + source.mixture[k], 0);
  let pick = draw(0, total - 1);
  const kind = KINDS.find((k) => (pick -= source.mixture[k]) < 0)!;
  const task = source.tasks[draw(0, source.tasks.length - 1)];
  const other = source.tasks[draw(0, source.tasks.length - 1)].answer;
  const wrong = wrongAnswer(task.answer, draw, other);
  const acceptRight = draw(0, 1) === 0;
  const opinionsRight = [0, 1, 2].map(() => draw(0, 1) === 0);
  if (kind === "lookup") {
    return tokenizeItem(source.tokenizer, kind, lookupDrillText(draw, source.searchWorlds?.hops));
  }
  if (kind === "copy") return tokenizeItem(source.tokenizer, kind, copyDrillText(draw));
  if (kind === "route" || kind === "query" || kind === "answer") {
    return searchItem(source, kind, draw);
  }
  return tokenizeItem(
    source.tokenizer,
    kind,
    itemText(kind, task, wrong, acceptRight, opinionsRight),
  );
}

/**
 * A search item: a world, one of its train questions, an episode (a quarter starting from a
 * distractor person's documents), and a state of it where the role has something to say.
 */
function searchItem(
  source: CorpusSource,
  kind: "route" | "query" | "answer",
  draw: (min: number, max: number) => number,
): CorpusItem {
  if (source.searchWorlds === undefined) {
    throw new Error(`the mixture draws ${kind} items but the corpus source has no searchWorlds`);
  }
  const { playground, tasks } = source.searchWorlds(draw(0, SEARCH_WORLDS - 1));
  const task = tasks[draw(0, tasks.length - 1)];
  const others = playground.world.tasks;
  const distractor = others[draw(0, others.length - 1)];
  const initial = draw(0, 3) === 0 && distractor.problem !== task.problem
    ? playground.retriever.search(personAsked(distractor), playground.topK)
    : [];
  const statesFor = (states: readonly SearchState[]) =>
    kind === "route"
      ? states
      : kind === "query"
      ? states.filter((s) => s.query !== null)
      : states.filter((s) => s.route === "answer");
  let eligible = statesFor(episodeStates(playground, task, initial));
  // A distractor may already hold every fact (no query left to teach): start from nothing then.
  if (eligible.length === 0) eligible = statesFor(episodeStates(playground, task, []));
  const state = eligible[draw(0, eligible.length - 1)];
  return tokenizeItem(source.tokenizer, kind, searchItemText(kind, task, state));
}

/**
 * Packs items `from, from+1, ...` into `rows` rows of at most `length` tokens; an item that does
 * not fit the rest of a row starts the next one. Returns the rows and the next item index, so
 * consecutive calls walk the corpus without gaps.
 *
 * @example
 * ```ts
 * import type { HfTokenizer } from "../../adapters/hf/mod.ts";
 * import { generateArithmeticTasks } from "../tasks/arithmetic/mod.ts";
 * import { MIXTURES, packRows } from "./corpus.ts";
 *
 * declare const tokenizer: HfTokenizer; // the embedded model's
 * const tasks = generateArithmeticTasks({ seed: 7, difficulty: 1, split: "train", count: 1000 });
 * const source = { seed: 7, tokenizer, tasks, mixture: MIXTURES.arithmetic };
 * const { rows, next } = packRows(source, 0, 16, 512); // the first step's batch
 * const second = packRows(source, next, 16, 512); // the next step's, from the item after
 * ```
 */
export function packRows(
  source: CorpusSource,
  from: number,
  rows: number,
  length: number,
): { rows: SupervisedExample[]; next: number } {
  const packed: SupervisedExample[] = [];
  let index = from;
  let pending = corpusItem(source, index);
  while (packed.length < rows) {
    const tokens: number[] = [];
    const lossSpans: [number, number][] = [];
    while (tokens.length + pending.tokens.length <= length) {
      for (const [a, b] of pending.lossSpans) {
        lossSpans.push([a + tokens.length, b + tokens.length]);
      }
      tokens.push(...pending.tokens);
      pending = corpusItem(source, ++index);
    }
    if (tokens.length === 0) {
      throw new Error(
        `a ${pending.kind} item of ${pending.tokens.length} tokens does not fit a row of ${length}; ` +
          `make rows at least that long (pretrain --row-length)`,
      );
    }
    packed.push({ tokens, lossSpans });
  }
  return { rows: packed, next: index };
}
