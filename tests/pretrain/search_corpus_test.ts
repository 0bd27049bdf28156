import assert from "node:assert/strict";
import { EMBEDDED_TOKENIZER_DIR, loadTokenizer } from "../../adapters/hf/mod.ts";
import { parseConfig, presetInput } from "../../engine/config/mod.ts";
import {
  corpusItem,
  type CorpusSource,
  MIXTURES,
  SEARCH_MIXTURE,
} from "../../engine/pretrain/corpus.ts";
import {
  copyDrillText,
  episodeStates,
  heldOutSearchTasks,
  lookupDrillText,
  personAsked,
  SEARCH_HOPS,
  SEARCH_REPLY_TOKENS,
  SEARCH_WORLD_SEED_OFFSET,
  SEARCH_WORLDS,
  searchItemText,
  searchPlayground,
  searchPrompt,
  searchReplyTokens,
  searchWorldPool,
} from "../../engine/pretrain/search-corpus.ts";
import { randomStream, uniformInt } from "../../engine/random/mod.ts";
import { generateArithmeticTasks } from "../../engine/tasks/mod.ts";
import { isCorrectAnswer } from "../../engine/trainer/group-rewards.ts";
import { generateSearchWorld, type SearchTask } from "../../engine/tasks/search/mod.ts";
import {
  parseAnswerText,
  parseQuery,
  parseRoute,
  searchWorkflow,
  type TurnRequest,
} from "../../engine/workflows/mod.ts";

const preset = parseConfig(presetInput("search-drmas"));
const pool = searchWorldPool();
const pool3 = searchWorldPool(3);
const tokenizer = await loadTokenizer(EMBEDDED_TOKENIZER_DIR.pathname);

/** The preset's agents, as the trainer builds them. */
const agents = Object.fromEntries(
  preset.agents.map((a) => [a.role, { id: a.id, role: a.role, prompt: a.prompt }]),
) as Parameters<typeof searchWorkflow>[0];

/**
 * Plays the preset's search workflow on `task` with every agent saying the corpus's reply for
 * the episode's current state: returns the requests, the states and the final answer.
 */
async function teacherEpisode(playground: ReturnType<typeof searchPlayground>, task: SearchTask) {
  const states = episodeStates(playground, task, []);
  const requests: TurnRequest[] = [];
  let state = 0;
  const workflow = searchWorkflow(agents, {
    maxTurns: preset.workflow.kind === "search" ? preset.workflow.max_turns : 0,
    topK: playground.topK,
    retriever: playground.retriever,
  });
  const episode = await workflow.run(task, (r) => {
    requests.push(r);
    const kind = r.agent.role === "verifier"
      ? "route"
      : r.agent.role === "searcher"
      ? "query"
      : "answer";
    const text = searchItemText(kind, task, states[state]).reply;
    if (kind === "query") state++;
    return Promise.resolve({ text, extra: null });
  });
  return { requests, states, episode };
}

Deno.test("search items are the search workflow's own prompts, and their replies solve the episode", async () => {
  for (const hops of [1, 2, 3]) {
    // Three hops need a world of three (its regions); the preset's four verifier turns fit them.
    const { playground, tasks } = (hops === 3 ? pool3 : pool)(0);
    const task = tasks.find((t) => t.hops === hops)!;
    const { requests, states, episode } = await teacherEpisode(playground, task);
    // One query per fact of the chain, a route before each and after the last, then the answer.
    assert.equal(states.length, hops + 1);
    assert.deepEqual(
      requests.map((r) => r.agent.role),
      [
        ...Array.from({ length: hops }, () => ["verifier", "searcher"]).flat(),
        "verifier",
        "answerer",
      ],
    );
    for (const [i, r] of requests.entries()) {
      const state = states[Math.floor(i / 2)];
      const kind = r.agent.role === "verifier"
        ? "route"
        : r.agent.role === "searcher"
        ? "query"
        : "answer";
      assert.equal(
        r.prompt,
        searchPrompt(kind, task.problem, state.evidence),
        `${r.agent.role} turn ${i}`,
      );
    }
    assert.equal(episode.finalAnswer, task.answer);
    // Graded as the run's reward grades it: the gold is a name, matched exactly.
    assert.ok(isCorrectAnswer(task.answer, episode.finalAnswer));
    assert.ok(!isCorrectAnswer(task.answer, `${task.answer}x`));
    assert.ok(episode.turns.every((t) => t.valid));
  }
});

Deno.test("search replies copy the facts found, then say what the workflow parses", () => {
  const { playground, tasks } = pool(1);
  const task = tasks.find((t) => t.hops === 2)!;
  const [start, middle, end] = episodeStates(playground, task, []);
  const person = /was (.+) born\?$/.exec(task.problem)![1];
  assert.deepEqual(start.evidence, []);
  assert.equal(searchItemText("route", task, start).reply, "action: search");
  assert.equal(searchItemText("query", task, start).reply, `query: ${person}`);
  const birth = middle.found[0];
  assert.ok(birth.startsWith(`${person} was born in `));
  const city = birth.slice(`${person} was born in `.length, -1);
  assert.equal(searchItemText("query", task, middle).reply, `${birth} query: ${city}`);
  assert.equal(parseQuery(searchItemText("query", task, middle).reply), city);
  assert.equal(parseRoute(searchItemText("route", task, middle).reply), "search");
  assert.deepEqual(end.found, [birth, `${city} is a city in ${task.answer}.`]);
  assert.equal(parseRoute(searchItemText("route", task, end).reply), "answer");
  assert.equal(parseAnswerText(searchItemText("answer", task, end).reply), task.answer);
  assert.throws(() => searchItemText("answer", task, start), /complete state/);
  assert.throws(() => searchItemText("query", task, end), /fact missing/);
});

Deno.test("no pretraining question is a held-out one, and the worlds are not the preset's", () => {
  const heldOut = [
    ...heldOutSearchTasks("validation").tasks,
    ...heldOutSearchTasks("test").tasks,
  ];
  assert.equal(heldOut.length, preset.tasks.kind === "synthetic-search" ? 128 : -1);
  assert.ok(heldOut.some((t) => t.hops === 1) && heldOut.some((t) => t.hops === 2));
  const held = new Set(heldOut.map((t) => t.problem));
  assert.ok(SEARCH_WORLD_SEED_OFFSET > preset.seed);
  for (let k = 0; k < SEARCH_WORLDS; k += 9) {
    const { tasks } = pool(k);
    assert.ok(tasks.length > 200, `world ${k} has ${tasks.length} questions`);
    for (const t of tasks) {
      assert.equal(t.split, "train");
      assert.ok(!held.has(t.problem), `world ${k} asks the held-out ${t.problem}`);
      assert.ok(t.id.startsWith(`search-${SEARCH_WORLD_SEED_OFFSET + k}-`));
    }
  }
});

Deno.test("three-hop worlds keep out every held-out person, whatever hops their questions ask", () => {
  // The study's search cells evaluate the preset world asking two or three hops
  // (tasks.min_hops 2): the same people as the preset's, asked other questions.
  const cells = generateSearchWorld({
    seed: preset.seed,
    splits: preset.tasks.kind === "synthetic-search"
      ? preset.tasks.splits
      : { train: 0, validation: 0, test: 0 },
    documents: preset.tasks.kind === "synthetic-search" ? preset.tasks.documents : 0,
    maxHops: 3,
    minHops: 2,
  }).tasks.filter((t) => t.split !== "train");
  const people = new Set(cells.map(personAsked));
  assert.equal(people.size, 128);
  const heldOut = (["validation", "test"] as const).flatMap((split) =>
    heldOutSearchTasks(split, 3).tasks
  );
  assert.deepEqual(new Set(heldOut.map(personAsked)), people);
  const hops = new Set<number>();
  for (let k = 0; k < SEARCH_WORLDS; k += 9) {
    for (const t of pool3(k).tasks) {
      assert.ok(!people.has(personAsked(t)), `world ${k} asks about the held-out ${t.problem}`);
      hops.add(t.hops);
    }
  }
  assert.deepEqual([...hops].sort(), [1, 2, 3]);
});

Deno.test("the mixed corpus draws every kind, deterministically, within a 512-token row", () => {
  const tasks = generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 500 });
  const source: CorpusSource = {
    seed: 1,
    tokenizer,
    tasks,
    mixture: SEARCH_MIXTURE,
    searchWorlds: pool,
  };
  const counts: Record<string, number> = {};
  for (let i = 0; i < 600; i++) {
    const item = corpusItem(source, i);
    counts[item.kind] = (counts[item.kind] ?? 0) + 1;
    assert.ok(item.tokens.length <= 512, `${item.kind} item ${i}: ${item.tokens.length} tokens`);
  }
  for (const kind of Object.keys(SEARCH_MIXTURE)) assert.ok(counts[kind] > 0, kind);
  assert.deepEqual(
    corpusItem(source, 41),
    corpusItem({ ...source, searchWorlds: searchWorldPool() }, 41),
  );
  assert.throws(
    () => {
      for (let i = 0; i < 50; i++) corpusItem({ ...source, searchWorlds: undefined }, i);
    },
    /no searchWorlds/,
  );
});

/** What a reader of the drill's question and evidence should reply: the facts, then the next step. */
function expectedLookupReply(prompt: string): string {
  const [, asked, person] = /^Question: In which (city|country|region) was (.+) born\?\n/.exec(
    prompt,
  )!;
  const evidence = [...prompt.matchAll(/^\[\d+\] (.+)$/gm)].map((m) => m[1]);
  // Each hop: the document that starts with what the previous one named, and what it names.
  const found: string[] = [];
  let subject = person;
  for (const [hop, lead] of [" was born in ", " is a city in ", " lies in "].entries()) {
    const doc = evidence.find((d) => d.startsWith(`${subject}${lead}`));
    if (doc === undefined) return `${found.map((d) => `${d} `).join("")}query: ${subject}\n`;
    found.push(doc);
    subject = doc.slice(`${subject}${lead}`.length, -1);
    if (["city", "country", "region"][hop] === asked) break;
  }
  return `${found.join(" ")} The final answer is \\boxed{${subject}}.\n`;
}

Deno.test("lookup drills: fresh names, distractors sharing them, replies a reader of the evidence gives", () => {
  for (const maxHops of SEARCH_HOPS) {
    const names = new Set<string>();
    const replies = { query: 0, answer: 0 };
    const asked = new Set<string>();
    let sharing = 0;
    for (let i = 0; i < 400; i++) {
      const stream = randomStream({ seed: 3, purpose: "lookup-test", sample: i });
      let n = 0;
      const { prompt, reply, chat } = lookupDrillText(
        (a, b) => uniformInt(stream, n++, a, b),
        maxHops,
      );
      assert.equal(chat, false);
      assert.equal(reply, expectedLookupReply(prompt), prompt);
      const person = /was (.+) born\?/.exec(prompt)![1];
      names.add(person);
      asked.add(/In which (\w+)/.exec(prompt)![1]);
      const [first, last] = person.split(" ");
      if (
        [...prompt.matchAll(/^\[\d+\] (.+) was born in/gm)].some((m) =>
          m[1] !== person && (m[1].startsWith(`${first} `) || m[1].endsWith(` ${last}`))
        )
      ) sharing++;
      replies[parseQuery(reply) === null ? "answer" : "query"]++;
      if (parseQuery(reply) === null) assert.ok(parseAnswerText(reply) !== null, reply);
      assert.ok(reply.length <= searchReplyTokens(maxHops), reply);
    }
    // Names are drawn per item: nearly every drill asks about someone new.
    assert.ok(names.size > 390, `${names.size} distinct people in 400 drills`);
    assert.ok(sharing > 40, `${sharing} drills with a namesake`);
    assert.ok(replies.query > 100 && replies.answer > 100, JSON.stringify(replies));
    assert.deepEqual(
      [...asked].sort(),
      maxHops === 2 ? ["city", "country"] : ["city", "country", "region"],
    );
  }
});

Deno.test("drills of at most two hops are the ones the committed model trained on", async () => {
  // The region is drawn only when a drill asks for it. The hash is of the first 200 drills as
  // the code before three-hop drills (commit 91558e3) wrote them.
  const texts = Array.from({ length: 200 }, (_, i) => {
    const stream = randomStream({ seed: 11, purpose: "lookup-test", sample: i });
    let n = 0;
    const drill = lookupDrillText((a, b) => uniformInt(stream, n++, a, b));
    return drill.prompt + drill.reply;
  });
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(texts.join("")));
  assert.equal(
    Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join(""),
    "1c7c7770120d3ac0924df1eda1cb04a0c9fddb8215f256259cf7257974dcea6e",
  );
});

Deno.test("copy drills: the reply is the prompt's names, drawn fresh per item", () => {
  const seen = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const stream = randomStream({ seed: 4, purpose: "copy-test", sample: i });
    let n = 0;
    const { prompt, reply, chat } = copyDrillText((a, b) => uniformInt(stream, n++, a, b));
    assert.equal(chat, false);
    assert.equal(prompt, `copy: ${reply}`);
    const names = reply.trimEnd().split(" ");
    assert.ok(names.length >= 2 && names.length <= 6, reply);
    assert.equal(new Set(names).size, names.length, reply);
    assert.ok(names.every((w) => /^[A-Z][a-z]{3,8}$/.test(w)), reply);
    seen.add(reply);
  }
  assert.equal(seen.size, 200);
});

Deno.test("the copy corpus is copy drills only, and needs no search worlds", () => {
  const source: CorpusSource = {
    seed: 1,
    tokenizer,
    tasks: generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 10 }),
    mixture: MIXTURES.copy,
  };
  for (let i = 0; i < 50; i++) {
    const item = corpusItem(source, i);
    assert.equal(item.kind, "copy");
    const text = tokenizer.decode([...item.tokens]);
    const [from, to] = item.lossSpans[0];
    const reply = tokenizer.decode(item.tokens.slice(from, to) as number[]);
    assert.equal(text, `copy: ${reply}${reply}`);
  }
});

Deno.test("every search reply of the corpus fits its reply budget", () => {
  assert.equal(SEARCH_REPLY_TOKENS, preset.sampling.max_tokens);
  for (const hops of SEARCH_HOPS) {
    const source: CorpusSource = {
      seed: 2,
      tokenizer,
      tasks: generateArithmeticTasks({ seed: 1, difficulty: 1, split: "train", count: 50 }),
      mixture: { ...SEARCH_MIXTURE, drill: 0, solve: 0, revise: 0, verify: 0, critique: 0 },
      searchWorlds: hops === 2 ? pool : pool3,
    };
    const budget = searchReplyTokens(hops);
    for (let i = 0; i < 300; i++) {
      const item = corpusItem(source, i);
      const [from, to] = item.lossSpans[0];
      // The reply and its <|im_end|> (or a drill's newline), as the rollout would generate them.
      assert.ok(to - from <= budget, `${hops} hops, ${item.kind} item ${i}: ${to - from} tokens`);
    }
  }
});
