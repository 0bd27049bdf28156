import assert from "node:assert/strict";
import { parseConfig, presetInput } from "../../engine/config/mod.ts";
import {
  buildWorkflow,
  parseRoute,
  parseVerdict,
  renderPrompt,
  type Speak,
} from "../../engine/workflows/mod.ts";

// The presets' prompt templates go through the real workflows: every placeholder they use must be
// one the workflow fills, and what they ask for must be what the workflow parses. The replies
// below are written in the formats the prompts request, standing in for a model's turn.
const question = { id: "q1", problem: "What is 2 + 2?", answer: "4" };

Deno.test("refine presets: prompts render with question, previous attempt and feedback", async () => {
  for (const name of ["refine-drmas", "refine-grpo", "smoke"]) {
    const config = parseConfig(presetInput(name));
    const prompts: string[] = [];
    let reviews = 0;
    const speak: Speak = (request) => {
      prompts.push(request.prompt);
      const text = request.agent.role === "solver"
        ? "2 + 2 = 4. The final answer is \\boxed{4}."
        : reviews++ === 0
        ? "The sum is wrong. verdict: revise"
        : "verdict: accept";
      return Promise.resolve({ text, extra: null });
    };
    const episode = await (await buildWorkflow(config)).run(question, speak);
    // revise, then accept; with max_loops 2 (smoke) the second solver turn is final, unreviewed.
    const expected = [["solver", true], ["verifier", true], ["solver", true], ["verifier", true]];
    assert.deepEqual(
      episode.turns.map((t) => [t.role, t.valid]),
      expected.slice(
        0,
        config.workflow.kind === "refine" && config.workflow.max_loops === 2 ? 3 : 4,
      ),
      name,
    );
    assert.ok(prompts.every((p) => p.includes("What is 2 + 2?")));
    // The second solver prompt carries the first attempt and the reviewer's feedback.
    assert.match(prompts[2], /Previous attempt: 2 \+ 2 = 4.*\nReviewer: The sum is wrong/s);
    assert.match(prompts[1], /verdict: accept/);
    assert.equal(episode.finalAnswer, "4");
  }
});

Deno.test("debate-mada: critics see the generators' answers in MADA-RL's concatenation", async () => {
  const config = parseConfig(presetInput("debate-mada"));
  const prompts = new Map<string, string>();
  const speak: Speak = (request) => {
    prompts.set(request.agent.id, request.prompt);
    return Promise.resolve({ text: `${request.agent.id}: \\boxed{4}`, extra: null });
  };
  const episode = await (await buildWorkflow(config)).run(question, speak);
  assert.equal(episode.turns.length, 6);
  assert.ok(episode.turns.every((t) => t.valid));
  const critic = prompts.get("critic-1")!;
  assert.match(critic, /These are the recent opinions from other agents:\nAnswer 1: generator-1/);
  assert.match(critic, /can you give an updated answer to the question\?$/);
  assert.doesNotMatch(prompts.get("generator-1")!, /opinions/);
});

Deno.test("search-drmas: prompts use only {question} and {evidence}, asking for parsed formats", () => {
  const config = parseConfig(presetInput("search-drmas"));
  const values = { question: "Where was Ada born?", evidence: "[1] Ada was born in Paris." };
  for (const agent of config.agents) {
    const prompt = renderPrompt(agent.prompt, values);
    assert.match(prompt, /Where was Ada born\?[\s\S]*\[1\] Ada was born in Paris\./, agent.id);
  }
  const router = config.agents.find((a) => a.role === "verifier")!.prompt;
  // The two formats the router prompt names are the ones parseRoute reads.
  assert.equal(parseRoute(router.match(/`(action: answer)`/)![1]), "answer");
  assert.equal(parseRoute(router.match(/`(action: search)`/)![1]), "search");
  const verifier = parseConfig(presetInput("refine-drmas")).agents[1].prompt;
  assert.equal(parseVerdict(verifier.match(/`(verdict: accept)`/)![1]), true);
});
