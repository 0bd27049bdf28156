/**
 * The search world's turns for the pretraining corpus: the `search-drmas` preset's router
 * (verifier), searcher and answerer prompts, rendered exactly as engine/workflows/search.ts
 * renders them, over worlds from the preset's own generator (engine/tasks/search) and retriever.
 *
 * Each item is one state of an episode played by the policy the workflow rewards: the router
 * says `action: answer` once the evidence holds every fact the question chains (the person's
 * birthplace, for two hops that city's country, for three that country's region), else `action:
 * search`; the searcher asks for the first missing fact (`query: <person>`, then `query: <city>`,
 * then `query: <country>`); the answerer answers from the evidence. Replies first copy the facts
 * found so far, one document each, the way arithmetic replies show their working: a small model
 * copies a sentence more reliably than it jumps to the name inside it. A quarter of the episodes start from a distractor's documents (another
 * person's), so the router must look for this question's facts, not for any evidence.
 *
 * Worlds are seeded `SEARCH_WORLD_SEED_OFFSET + k` and only their train questions are used, and
 * any question whose text is one of the held-out questions (the preset world's validation and
 * test splits, `heldOutSearchTasks`) is skipped, so no evaluated question is ever trained on.
 */
import { bm25Retriever } from "../../adapters/search/mod.ts";
import { parseConfig, PRESET_PROMPTS, presetInput } from "../config/mod.ts";
import {
  generateSearchWorld,
  NAME_SYLLABLES,
  type SearchTask,
  type SearchWorld,
} from "../tasks/search/mod.ts";
import { renderPrompt, type Retriever } from "../workflows/mod.ts";

/** The search turns an item teaches. */
export type SearchItemKind = "route" | "query" | "answer";

/** Pretraining worlds' seeds start here, far from the seeds runs use. */
export const SEARCH_WORLD_SEED_OFFSET = 1_000_000;

/** Distinct pretraining worlds the items cycle through (each ~500 documents, 256 questions). */
export const SEARCH_WORLDS = 64;

/** The preset whose world, prompts and retrieval depth the items reproduce. */
const PRESET = parseConfig(presetInput("search-drmas"));

/**
 * Facts a pretraining question chains at most: the preset's two, or three for a search team
 * whose runs ask three-hop questions (the study's search cells, `tasks.max_hops` 3). A world of
 * three hops has the same people and homes as the world of two at its seed, plus regions.
 */
export type SearchHops = 2 | 3;

/** What the worlds of `hops` ask: `deno task pretrain --max-hops`, default the preset's. */
export const SEARCH_HOPS: readonly SearchHops[] = [2, 3];

/**
 * The reply budget the pretraining evaluation generates: the preset's for two hops; for three,
 * the study's search cells' 192 (a reply copies up to three facts before it answers).
 */
export function searchReplyTokens(hops: SearchHops): number {
  return hops === 2 ? PRESET.sampling.max_tokens : 192;
}

/** The preset's reply budget: the pretraining evaluation generates what a rollout may. */
export const SEARCH_REPLY_TOKENS = searchReplyTokens(2);

/** One world with its retriever and questions: what an episode needs. */
export interface SearchPlayground {
  readonly world: SearchWorld;
  readonly retriever: Retriever;
  readonly topK: number;
}

/** The preset's world at `seed` (its documents and splits) asking up to `hops` hops, with BM25. */
export function searchPlayground(seed: number, hops: SearchHops = 2): SearchPlayground {
  const tasks = PRESET.tasks;
  if (tasks.kind !== "synthetic-search" || PRESET.workflow.kind !== "search") {
    throw new Error("the search-drmas preset no longer describes a synthetic-search world");
  }
  if (tasks.max_hops !== 2) {
    throw new Error(`the search-drmas preset asks ${tasks.max_hops} hops; SearchHops assumes 2`);
  }
  const world = generateSearchWorld({
    seed,
    splits: tasks.splits,
    documents: tasks.documents,
    maxHops: hops,
  });
  return { world, retriever: bm25Retriever(world.documents), topK: PRESET.workflow.top_k };
}

/**
 * The questions no pretraining item asks: the `split` questions of the preset's world at the
 * preset's seed (what `deno task train --preset search-drmas` evaluates on, and with `hops` 3
 * what the study's search cells evaluate on), with its world.
 */
export function heldOutSearchTasks(
  split: "validation" | "test",
  hops: SearchHops = 2,
): { playground: SearchPlayground; tasks: readonly SearchTask[] } {
  const playground = searchPlayground(PRESET.seed, hops);
  return { playground, tasks: playground.world.tasks.filter((t) => t.split === split) };
}

/** One state of an episode: the evidence so far and what each role should say in it. */
export interface SearchState {
  readonly evidence: readonly string[];
  /** The facts of the chain found in the evidence, in hop order (the replies copy them). */
  readonly found: readonly string[];
  readonly route: "search" | "answer";
  /** The query for the first missing fact; null once nothing is missing. */
  readonly query: string | null;
}

/** The person a search question asks about ("In which city was Talo Venn born?": Talo Venn). */
export function personAsked(task: SearchTask): string {
  const person = /was (.+) born\?$/.exec(task.problem)?.[1];
  if (person === undefined) throw new Error(`not a search question: ${task.problem}`);
  return person;
}

/** A task's chain of facts: the documents the answer needs, and what to search for each. */
function factChain(world: SearchWorld, task: SearchTask): { doc: string; query: string }[] {
  const person = personAsked(task);
  const birth = world.documents.find((d) => d.startsWith(`${person} was born in `));
  if (birth === undefined) throw new Error(`the world has no birthplace of ${person}`);
  const city = birth.slice(`${person} was born in `.length, -1);
  const chain = [{ doc: birth, query: person }];
  if (task.hops === 1) return chain;
  const inCountry = world.documents.find((d) => d.startsWith(`${city} is a city in `));
  if (inCountry === undefined) throw new Error(`the world has no country of ${city}`);
  chain.push({ doc: inCountry, query: city });
  if (task.hops === 2) return chain;
  const country = inCountry.slice(`${city} is a city in `.length, -1);
  chain.push({ doc: `${country} lies in ${task.answer}.`, query: country });
  return chain;
}

/**
 * The states of an episode in which the searcher always asks for the first missing fact,
 * starting from `initial` evidence, up to the state where nothing is missing (at most one query
 * per fact). Evidence grows as the workflow grows it: new documents appended, repeats dropped.
 *
 * @example
 * ```ts
 * import { episodeStates, heldOutSearchTasks } from "./search-corpus.ts";
 *
 * const { playground, tasks } = heldOutSearchTasks("validation");
 * episodeStates(playground, tasks[0], []).map((s) => s.query);
 * // ["Kazufen Miando", "Torzu", null]: the person, their city, then the answer
 * ```
 */
export function episodeStates(
  playground: SearchPlayground,
  task: SearchTask,
  initial: readonly string[],
): SearchState[] {
  const chain = factChain(playground.world, task);
  const states: SearchState[] = [];
  const evidence = [...initial];
  for (let round = 0; round <= chain.length; round++) {
    const missing = chain.find((f) => !evidence.includes(f.doc));
    states.push(Object.freeze({
      evidence: Object.freeze([...evidence]),
      found: chain.filter((f) => evidence.includes(f.doc)).map((f) => f.doc),
      route: missing === undefined ? "answer" : "search",
      query: missing?.query ?? null,
    }));
    if (missing === undefined) break;
    for (const doc of playground.retriever.search(missing.query, playground.topK)) {
      if (!evidence.includes(doc)) evidence.push(doc);
    }
  }
  return states;
}

/** The workflow's rendering of a search agent's prompt (engine/workflows/search.ts). */
export function searchPrompt(
  kind: SearchItemKind,
  question: string,
  evidence: readonly string[],
): string {
  const template = kind === "route"
    ? PRESET_PROMPTS.router
    : kind === "query"
    ? PRESET_PROMPTS.searcher
    : PRESET_PROMPTS.answerer;
  return renderPrompt(template, {
    question,
    evidence: evidence.map((d, i) => `[${i + 1}] ${d}`).join("\n"),
  });
}

/**
 * The chat exchange of one role in one state. Answers come only from final states (the
 * answerer is never taught to guess); queries only from states with a fact missing.
 */
export function searchItemText(
  kind: SearchItemKind,
  task: SearchTask,
  state: SearchState,
): { prompt: string; reply: string; chat: true } {
  const found = state.found.join(" ");
  const lead = found === "" ? "" : `${found} `;
  const prompt = searchPrompt(kind, task.problem, state.evidence);
  switch (kind) {
    case "route":
      return { prompt, reply: `${lead}action: ${state.route}`, chat: true };
    case "query":
      if (state.query === null) throw new Error("a query item needs a state with a fact missing");
      return { prompt, reply: `${lead}query: ${state.query}`, chat: true };
    case "answer":
      if (state.route !== "answer") throw new Error("an answer item needs a complete state");
      return { prompt, reply: `${lead}The final answer is \\boxed{${task.answer}}.`, chat: true };
  }
}

/** World `k` of the pretraining pool, and the hops its worlds (and so its drills) ask at most. */
export interface SearchWorldPool {
  (k: number): { playground: SearchPlayground; tasks: readonly SearchTask[] };
  readonly hops: SearchHops;
}

/**
 * Pretraining worlds asking up to `hops` hops, built on first use, and their train questions
 * minus any about a held-out person: one asked in the preset world's validation or test split
 * at any hop count (a world's people do not depend on its hops, so a held-out person's two- and
 * three-hop questions are both kept out). A pure function of `hops`: every item keyed by
 * (seed, index) draws its world from here.
 */
export function searchWorldPool(hops: SearchHops = 2): SearchWorldPool {
  const heldOut = new Set(
    (["validation", "test"] as const).flatMap((s) => heldOutSearchTasks(s).tasks)
      .map(personAsked),
  );
  const cache = new Map<number, { playground: SearchPlayground; tasks: readonly SearchTask[] }>();
  const world = (k: number) => {
    let entry = cache.get(k);
    if (entry === undefined) {
      const playground = searchPlayground(SEARCH_WORLD_SEED_OFFSET + k, hops);
      const tasks = playground.world.tasks.filter((t) =>
        t.split === "train" && !heldOut.has(personAsked(t))
      );
      entry = { playground, tasks };
      cache.set(k, entry);
    }
    return entry;
  };
  return Object.assign(world, { hops });
}

/** Distinct invented names of two or three syllables, drawn per call (as the worlds' names). */
function freshNames(draw: (min: number, max: number) => number): () => string {
  const used = new Set<string>();
  return () => {
    for (;;) {
      const word = Array.from(
        { length: draw(2, 3) },
        () => NAME_SYLLABLES[draw(0, NAME_SYLLABLES.length - 1)],
      ).join("");
      const cap = word[0].toUpperCase() + word.slice(1);
      if (!used.has(cap)) {
        used.add(cap);
        return cap;
      }
    }
  };
}

/**
 * A copy drill: `copy: <names>` -> the same names. Every reply token but the first is predicted
 * by the prompt token after the previous one's earlier occurrence, the induction pattern the
 * lookups are built on; on the search turns alone 150 steps did not form it (the replies named
 * people of their own).
 *
 * @example
 * ```ts
 * import { randomStream, uniformInt } from "../random/mod.ts";
 * import { copyDrillText } from "./search-corpus.ts";
 *
 * const stream = randomStream({ seed: 7, purpose: "pretrain-corpus", sample: 0 });
 * let draws = 0;
 * const draw = (min: number, max: number) => uniformInt(stream, draws++, min, max);
 * copyDrillText(draw);
 * // { prompt: "copy: Milo Lolo Sabri\n", reply: "Milo Lolo Sabri\n", chat: false }
 * ```
 */
export function copyDrillText(
  draw: (min: number, max: number) => number,
): { prompt: string; reply: string; chat: false } {
  const name = freshNames(draw);
  const names = Array.from({ length: draw(2, 6) }, name).join(" ");
  return { prompt: `copy: ${names}\n`, reply: `${names}\n`, chat: false };
}

/**
 * A lookup drill: one line `Question: ...\n\nEvidence:\n[1] ...` over a mini world of fresh
 * invented names -> what the searcher or answerer replies in that state (the facts found, then
 * `query: <first missing fact>` or the boxed answer). Chat items spend ~150 tokens of
 * instructions and template per reply; a drill carries the same lookup in ~100, and its names
 * are drawn per item, so the only way to the reply is to copy it from the question and evidence.
 * The evidence holds the chain's facts found so far beside distractors as BM25 retrieves them:
 * people sharing the asked person's first or last name, and other cities' countries.
 *
 * @example
 * ```ts
 * import { randomStream, uniformInt } from "../random/mod.ts";
 * import { lookupDrillText } from "./search-corpus.ts";
 *
 * const stream = randomStream({ seed: 7, purpose: "pretrain-corpus", sample: 0 });
 * let draws = 0;
 * const draw = (min: number, max: number) => uniformInt(stream, draws++, min, max);
 * const { prompt, reply } = lookupDrillText(draw);
 * // prompt: "Question: In which country was Milo Lolo born?\n\nEvidence:\n[1] Renvel Saka was born
 * // in Loan.\n[2] Milo Brivelbri was born in Mifenvel.\n[3] Milo Savelka was born in Sabri.\n"
 * // reply: "query: Milo Lolo\n" (no fact of the chain in the evidence yet)
 * ```
 */
export function lookupDrillText(
  draw: (min: number, max: number) => number,
  maxHops: SearchHops = 2,
): { prompt: string; reply: string; chat: false } {
  const name = freshNames(draw);
  const hops = draw(1, maxHops);
  const [first, last, city, country] = [name(), name(), name(), name()];
  // Drawn only when asked for, so that drills of at most two hops are those they always were.
  const region = hops === 3 ? name() : null;
  const person = `${first} ${last}`;
  const chain = [
    `${person} was born in ${city}.`,
    `${city} is a city in ${country}.`,
    `${country} lies in ${region}.`,
  ].slice(0, hops);
  const distractors = Array.from({ length: draw(1, 3) }, () => {
    const shared = draw(0, 2);
    const other = shared === 0
      ? `${first} ${name()}`
      : shared === 1
      ? `${name()} ${last}`
      : `${name()} ${name()}`;
    switch (draw(0, maxHops - 1)) {
      case 0:
        return `${other} was born in ${draw(0, 3) === 0 ? city : name()}.`;
      case 1:
        return `${name()} is a city in ${draw(0, 3) === 0 ? country : name()}.`;
      default:
        return `${name()} lies in ${draw(0, 3) === 0 && region !== null ? region : name()}.`;
    }
  });
  const found = chain.slice(0, draw(0, hops));
  const evidence = [...found, ...distractors];
  for (let i = evidence.length - 1; i > 0; i--) {
    const j = draw(0, i);
    [evidence[i], evidence[j]] = [evidence[j], evidence[i]];
  }
  const question = `In which ${["city", "country", "region"][hops - 1]} was ${person} born?`;
  const lead = found.length === 0 ? "" : `${found.join(" ")} `;
  const reply = found.length < hops
    ? `${lead}query: ${[person, city, country][found.length]}`
    : `${lead}The final answer is \\boxed{${[city, country, region][hops - 1]}}.`;
  return {
    prompt: `Question: ${question}\n\nEvidence:\n${
      evidence.map((d, i) => `[${i + 1}] ${d}`).join("\n")
    }\n`,
    reply: `${reply}\n`,
    chat: false,
  };
}
