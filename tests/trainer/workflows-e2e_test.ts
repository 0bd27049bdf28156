/**
 * End to end on the smoke scale, for each workflow: the events a run writes satisfy the engine's
 * invariants (every action has exactly one advantage; each worker group's update trained on
 * exactly its own agents' response tokens).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { initEmbeddedModel, saveEmbeddedModel } from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";

async function run(preset: string, overrides: Record<string, unknown>, keepAgents?: string[]) {
  const tmp = await Deno.makeTempDir();
  try {
    const model = join(tmp, "model");
    await saveEmbeddedModel(
      model,
      initEmbeddedModel((purpose, out, std) =>
        fillNormal(randomStream({ seed: 9, purpose }), out, { std })
      ),
    );
    const raw = presetInput(preset);
    const config = parseConfig(mergeConfig(raw, {
      agents: (raw.agents as { id: string; model: string }[])
        .filter((a) => !keepAgents || keepAgents.includes(a.id))
        .map((a) => ({ ...a, model })),
      steps: 1,
      group_size: 2,
      batch_size: 1,
      sampling: { temperature: 1, top_p: 1, max_tokens: 6, stop: [] },
      evaluation: { benchmarks: ["validation"], n_samples: 1, every_steps: 0 },
      runtime: { device: "cpu", threads: 1 },
      store: join(tmp, "events.sqlite"),
      ...overrides,
    }));
    await using store = await openStore(config.store);
    const runtime = await openRuntime("cpu", { threads: 1 });
    try {
      await runTraining(config, { store, runtime, runId: "e2e" });
    } finally {
      await runtime.close();
    }
    const events: StoredEvent<NewEvent>[] = [];
    for await (const e of store.readStream("e2e")) events.push(e as StoredEvent<NewEvent>);
    return { config, events };
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

function checkInvariants(
  events: StoredEvent<NewEvent>[],
  agentToWg: Readonly<Record<string, string>>,
) {
  const turns = events.flatMap((e) =>
    e.type === "turn.generated" && e.data.phase === "rollout" ? [e.data] : []
  );
  const advantages = events.flatMap((e) =>
    e.type === "advantages.computed"
      ? e.data.advantages.map((a) => ({ ...a, prompt: e.data.prompt, step: e.data.step }))
      : []
  );
  const key = (x: { step: number; prompt: number; sample: number; agent: string; turn: number }) =>
    `${x.step}/${x.prompt}/${x.sample}/${x.agent}/${x.turn}`;
  assert.ok(turns.length > 0);
  assert.deepEqual(advantages.map(key).sort(), turns.map(key).sort(), "one advantage per action");
  const epochTokens = new Map<string, number>();
  for (const e of events) {
    if (e.type !== "gradient_step.applied") continue;
    const own = turns.filter((t) =>
      t.step === e.data.step && agentToWg[t.agent] === e.data.workerGroup
    );
    assert.deepEqual(
      [...e.data.agents].sort(),
      [...new Set(Object.keys(agentToWg).filter((a) => agentToWg[a] === e.data.workerGroup))]
        .sort(),
    );
    // An update trains on its recorded rows, all of them its own agents' turns.
    const rows = e.data.rows!.map((r) => {
      const turn = own.find((t) =>
        t.prompt === r.prompt && t.sample === r.sample && t.turn === r.turn
      );
      assert.ok(turn, `${e.data.workerGroup} update ${e.data.update} trained on a foreign turn`);
      return turn;
    });
    assert.equal(e.data.tokens, rows.reduce((n, t) => n + t.responseTokens.length, 0));
    const epoch = `${e.data.step}/${e.data.workerGroup}/${e.data.epoch}`;
    epochTokens.set(epoch, (epochTokens.get(epoch) ?? 0) + e.data.tokens);
  }
  // Each epoch's mini-batches cover the group's own turns once.
  assert.ok(epochTokens.size > 0, "no gradient step to check");
  for (const [epoch, tokens] of epochTokens) {
    const [step, wg] = epoch.split("/");
    const own = turns.filter((t) => t.step === Number(step) && agentToWg[t.agent] === wg);
    assert.equal(
      tokens,
      own.reduce((n, t) => n + t.responseTokens.length, 0),
      `${wg} trained on its own agents' tokens only, each once per epoch`,
    );
  }
}

Deno.test("debate (MADA-RL) end to end: generators, critics, counterfactual advantages", async () => {
  const { config, events } = await run(
    "debate-mada",
    { workflow: { kind: "debate", generators: 2, critics: 1, rounds: 2 } },
    ["generator-1", "generator-2", "critic-1"],
  );
  checkInvariants(events, config.agent_to_wg);
  const adv = events.find((e) => e.type === "advantages.computed");
  assert.equal(adv?.type === "advantages.computed" && adv.data.estimator, "mada");
});

Deno.test("search end to end: verifier, searcher and answerer over the synthetic world", async () => {
  const { config, events } = await run("search-drmas", {
    tasks: {
      kind: "synthetic-search",
      documents: 30,
      max_hops: 2,
      splits: { train: 4, validation: 2, test: 2 },
    },
    workflow: { kind: "search", max_turns: 2, top_k: 2 },
  });
  checkInvariants(events, config.agent_to_wg);
  const roles = new Set(events.flatMap((e) => e.type === "turn.generated" ? [e.data.agent] : []));
  assert.ok(roles.has("verifier") && roles.has("answerer"));
});

Deno.test("refine with shared weights: one worker group trains on both agents' actions", async () => {
  const { config, events } = await run("smoke", { agent_to_wg: "shared" });
  assert.equal(config.worker_groups.length, 1);
  checkInvariants(events, config.agent_to_wg);
  const steps = events.filter((e) => e.type === "gradient_step.applied");
  assert.equal(steps.length, 1);
  // Each agent's share of the shared gradient is recorded; together they bound the whole norm.
  const { agentGradNorms, gradNormBeforeClip } = steps[0].data as {
    agentGradNorms: Record<string, number>;
    gradNormBeforeClip: number;
  };
  const agents = config.agents.map((a) => a.id);
  const trained = new Set(
    events.flatMap((e) =>
      e.type === "advantages.computed" ? e.data.advantages.map((a) => a.agent) : []
    ),
  );
  assert.deepEqual(Object.keys(agentGradNorms).sort(), agents.toSorted());
  for (const agent of agents) {
    const norm = agentGradNorms[agent];
    assert.ok(Number.isFinite(norm) && norm >= 0, `${agent}: ${norm}`);
    if (!trained.has(agent)) assert.equal(norm, 0, `${agent} had no actions`);
  }
  const sum = agents.reduce((s, a) => s + agentGradNorms[a], 0);
  assert.ok(gradNormBeforeClip <= sum * (1 + 1e-5) + 1e-7, `${gradNormBeforeClip} > ${sum}`);
});
