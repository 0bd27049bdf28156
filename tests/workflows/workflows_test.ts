import assert from "node:assert/strict";
import {
  debateWorkflow,
  majorityAnswer,
  PromptTemplateError,
  refineWorkflow,
  renderPrompt,
  searchWorkflow,
  type Speak,
  type TurnRequest,
} from "../../engine/workflows/mod.ts";

const question = { id: "q1", problem: "What is 2+2?", answer: "4" };

/** Replies from a per-agent script, recording every request it was asked. */
function scripted(replies: Record<string, string[]>) {
  const asked: TurnRequest[] = [];
  const speak: Speak<null> = (request) => {
    asked.push(request);
    const next = replies[request.agent.id]?.shift();
    if (next === undefined) throw new Error(`no scripted reply left for ${request.agent.id}`);
    return Promise.resolve({ text: next, extra: null });
  };
  return { speak, asked };
}

const solver = {
  id: "solver",
  role: "solver",
  prompt: "Q: {question}\nPrev: {previous}\nFb: {feedback}",
};
const verifier = { id: "verifier", role: "verifier", prompt: "Check {question}: {solution}" };

Deno.test("refine: the verifier's accept ends the loop with the solver's last answer", async () => {
  const { speak, asked } = scripted({
    solver: ["it is \\boxed{5}", "oops, \\boxed{4}"],
    verifier: ["wrong. verdict: revise", "verdict: accept"],
  });
  const episode = await refineWorkflow({ solver, verifier }, 3).run(question, speak);
  assert.deepEqual(episode.turns.map((t) => [t.turn, t.agent, t.valid]), [
    [0, "solver", true],
    [1, "verifier", true],
    [2, "solver", true],
    [3, "verifier", true],
  ]);
  assert.equal(episode.finalAnswer, "4");
  // The revising solver sees its previous solution and the verifier's feedback.
  assert.equal(
    asked[2].prompt,
    "Q: What is 2+2?\nPrev: it is \\boxed{5}\nFb: wrong. verdict: revise",
  );
  assert.equal(asked[1].prompt, "Check What is 2+2?: it is \\boxed{5}");
});

Deno.test("refine: max loops ends on a solver turn, and an unreadable verdict is invalid", async () => {
  const { speak } = scripted({
    solver: ["\\boxed{1}", "no answer here", "\\boxed{3}"],
    verifier: ["hmm", "verdict: revise"],
  });
  const episode = await refineWorkflow({ solver, verifier }, 3).run(question, speak);
  assert.deepEqual(episode.turns.map((t) => `${t.role}:${t.valid}`), [
    "solver:true",
    "verifier:false",
    "solver:false",
    "verifier:true",
    "solver:true",
  ]);
  assert.deepEqual(episode.turns[1].action, { kind: "verdict", accept: false });
  assert.equal(episode.finalAnswer, "3");
});

Deno.test("debate: critics see every previous-round answer; the majority decides", async () => {
  const gen = (i: number) => ({ id: `g${i}`, role: "generator", prompt: "{question}" });
  const critic = (i: number) => ({
    id: `c${i}`,
    role: "critic",
    prompt: "{question}\n{answers}\nYour answer:",
  });
  const { speak, asked } = scripted({
    g1: ["\\boxed{5}"],
    g2: ["\\boxed{4}"],
    g3: ["\\boxed{5}"],
    c1: ["\\boxed{4}", "\\boxed{4}"],
    c2: ["\\boxed{\\frac{8}{2}}", "\\boxed{5}"],
  });
  const workflow = debateWorkflow({
    generators: [gen(1), gen(2), gen(3)],
    critics: [critic(1), critic(2)],
  }, 3);
  const episode = await workflow.run(question, speak);
  assert.deepEqual(episode.turns.map((t) => `${t.turn}:${t.round}:${t.agent}`), [
    "0:0:g1",
    "1:0:g2",
    "2:0:g3",
    "3:1:c1",
    "4:1:c2",
    "5:2:c1",
    "6:2:c2",
  ]);
  assert.equal(
    asked[3].prompt,
    "What is 2+2?\nAnswer 1: \\boxed{5}\nAnswer 2: \\boxed{4}\nAnswer 3: \\boxed{5}\nYour answer:",
  );
  // Round 2 critics see round 1's critics, not the generators.
  assert.match(asked[5].prompt, /Answer 1: \\boxed\{4\}\nAnswer 2: \\boxed\{\\frac\{8\}\{2\}\}/);
  // Last round: 4 and 5 tie one vote each; the first given wins.
  assert.equal(episode.finalAnswer, "4");
});

Deno.test("majorityAnswer counts equivalent answers together", () => {
  const turn = (answer: string | null) => ({
    turn: 0,
    agent: "a",
    role: "critic",
    prompt: "",
    output: { text: "", extra: null },
    action: { kind: "answer" as const, answer },
    valid: answer !== null,
  });
  assert.equal(
    majorityAnswer([turn("3"), turn("\\frac{1}{2}"), turn("0.5"), turn(null)]),
    "\\frac{1}{2}",
  );
  assert.equal(majorityAnswer([turn(null)]), null);
});

Deno.test("search: the verifier routes to the searcher until it calls the answerer", async () => {
  const docs = ["Paris is the capital of France.", "Berlin is the capital of Germany."];
  const retriever = {
    search: (query: string, topK: number) =>
      docs.filter((d) => query.split(" ").some((w) => d.includes(w))).slice(0, topK),
  };
  const agents = {
    verifier: { id: "v", role: "verifier", prompt: "{question}\n{evidence}" },
    searcher: { id: "s", role: "searcher", prompt: "{question}" },
    answerer: { id: "a", role: "answerer", prompt: "{evidence}\n{question}" },
  };
  const { speak, asked } = scripted({
    v: ["need more. action: search", "action: answer"],
    s: ["query: France"],
    a: ["The final answer is \\boxed{Paris}"],
  });
  const episode = await searchWorkflow(agents, { maxTurns: 4, topK: 1, retriever }).run(
    { id: "q", problem: "Capital of France?", answer: "Paris" },
    speak,
  );
  assert.deepEqual(episode.turns.map((t) => t.role), [
    "verifier",
    "searcher",
    "verifier",
    "answerer",
  ]);
  assert.deepEqual(episode.turns[1].action, {
    kind: "query",
    query: "France",
    evidence: ["Paris is the capital of France."],
  });
  assert.equal(asked[3].prompt, "[1] Paris is the capital of France.\nCapital of France?");
  assert.equal(episode.finalAnswer, "Paris");
});

Deno.test("search: after max turns the answerer is called regardless", async () => {
  const agents = {
    verifier: { id: "v", role: "verifier", prompt: "{question}" },
    searcher: { id: "s", role: "searcher", prompt: "{question}" },
    answerer: { id: "a", role: "answerer", prompt: "{question}" },
  };
  const { speak } = scripted({ v: ["?", "?"], s: ["nothing", "nothing"], a: ["\\boxed{1}"] });
  const episode = await searchWorkflow(agents, {
    maxTurns: 2,
    topK: 3,
    retriever: { search: () => [] },
  }).run(question, speak);
  assert.deepEqual(episode.turns.map((t) => `${t.role}:${t.valid}`), [
    "verifier:false",
    "searcher:false",
    "verifier:false",
    "searcher:false",
    "answerer:true",
  ]);
});

Deno.test("a prompt template naming an unknown placeholder is a clear error", () => {
  assert.equal(renderPrompt("{{literal}} {question}", { question: "x" }), "{literal} x");
  assert.throws(
    () => renderPrompt("{question} {answers}", { question: "x" }),
    (err: Error) =>
      err instanceof PromptTemplateError && /\{answers\}/.test(err.message) &&
      /\{question\}/.test(err.message),
  );
});

Deno.test("refine: {revision} is empty on the first loop and labels the history after", async () => {
  const { speak, asked } = scripted({
    solver: ["\\boxed{5}", "\\boxed{4}"],
    verifier: ["verdict: revise, recheck"],
  });
  const bare = { ...solver, prompt: "{question}{revision}" };
  await refineWorkflow({ solver: bare, verifier }, 2).run(question, speak);
  assert.equal(asked[0].prompt, "What is 2+2?");
  assert.equal(
    asked[2].prompt,
    "What is 2+2?\n\nPrevious attempt: \\boxed{5}\nReviewer: verdict: revise, recheck",
  );
});
