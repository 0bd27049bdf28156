/**
 * The estimators and the PPO update through the trainer and its events, not only as functions:
 * each test runs a tiny refine experiment on a random model and checks what the log says against
 * an independent recomputation from the log's own values.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig } from "../../engine/config/mod.ts";
import { replayRun } from "../../engine/replay/mod.ts";
import { openPolicyPool } from "../../engine/trainer/rollout/policy-pool.ts";
import { policyBatch, responseValues } from "../../engine/trainer/policy-batch.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import { type EventData, type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { randomModel, tinyConfigInput } from "../replay/tiny-run.ts";
import { runCli } from "../support/run-cli.ts";

type Events = StoredEvent<NewEvent>[];

function ofType<T extends NewEvent["type"]>(events: Events, type: T): EventData<T>[] {
  return events.filter((e) => e.type === type).map((e) => e.data as EventData<T>);
}

type AgentInput = { id: string; [key: string]: unknown };

/**
 * Runs a one-step refine experiment with `overrides` (and each agent edited by `agent`) on the
 * pretrained embedded model, whose groups mix right, wrong and invalid answers, or on a random
 * model, which answers nothing right; returns its events.
 */
async function tinyRun(
  tmp: string,
  name: string,
  overrides: Record<string, unknown>,
  agent: (a: AgentInput) => AgentInput = (a) => a,
  model: "embedded" | "random" = "embedded",
) {
  const path = join(tmp, `${name}.sqlite`);
  const weights = model === "random" ? await randomModel(join(tmp, name)) : "embedded";
  const input = mergeConfig(tinyConfigInput(weights, path, 1), {
    sampling: { temperature: 1, top_p: 1, max_tokens: 40 },
    ...overrides,
  }) as {
    agents: AgentInput[];
  };
  const config = parseConfig({ ...input, agents: input.agents.map(agent) });
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    await using store = await openStore(path);
    await runTraining(config, { store, runtime, runId: name });
    const events: Events = [];
    for await (const e of store.readStream(name)) events.push(e as StoredEvent<NewEvent>);
    return { config, events, path };
  } finally {
    await runtime.close();
  }
}

function populationStats(values: readonly number[]) {
  const mu = values.reduce((s, v) => s + v, 0) / values.length;
  const sigma = Math.sqrt(values.reduce((s, v) => s + (v - mu) ** 2, 0) / values.length);
  return { mu, sigma };
}

const close = (actual: number, expected: number, tol: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} vs ${expected}`);

/** Checks every GRPO advantage event against a recomputation from its recorded rewards. */
function checkGrpo(events: Events) {
  let distinctScores = 0;
  const groups = ofType(events, "advantages.computed");
  assert.ok(groups.length > 0, "no advantages.computed event to check");
  for (const adv of groups) {
    assert.equal(adv.scope, "group");
    const samples = [...new Set(adv.advantages.map((a) => a.sample))];
    const scores = samples.map((s) => {
      const own = adv.advantages.filter((a) => a.sample === s).map((a) => a.reward!);
      return own.reduce((x, y) => x + y, 0) / own.length;
    });
    if (new Set(scores).size > 1) distinctScores++;
    const { mu, sigma } = populationStats(scores);
    close(adv.baseline.global.mu, mu, 1e-12, "mu over trajectory scores");
    close(adv.baseline.global.sigma, sigma, 1e-12, "sigma over trajectory scores");
    for (const a of adv.advantages) {
      const score = scores[samples.indexOf(a.sample)];
      assert.equal(a.score, score);
      const expected = score === mu ? 0 : (score - mu) / (sigma + 1e-6);
      close(a.advantage, expected, 1e-9, `advantage of p${adv.prompt} k${a.sample} t${a.turn}`);
      assert.ok(Math.abs(a.advantage) <= Math.sqrt(samples.length - 1) + 1e-9);
    }
  }
  return distinctScores;
}

Deno.test("grpo in training: scores are the penalized action means, advantages bounded", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const grpo = { estimator: { kind: "grpo", sigma: "population", eps: 1e-6 }, group_size: 4 };
    const mixed = await tinyRun(tmp, "grpo", { ...grpo, batch_size: 2 });
    assert.ok(checkGrpo(mixed.events) > 0, "no group with distinct scores to check the formula on");
    // A random model answers nothing right (R = 0 everywhere) and its verdicts do not parse
    // (penalty 0.1): the sigma = 0 groups where the old baseline gave -0.1 / 1e-6 = -1e5.
    const flat = await tinyRun(tmp, "flat", { ...grpo, batch_size: 1 }, undefined, "random");
    checkGrpo(flat.events);
    const totals = ofType(flat.events, "reward.assigned").filter((r) => r.agent === null);
    const [adv] = ofType(flat.events, "advantages.computed");
    assert.ok(totals.length >= 4, `${totals.length} trajectory rewards`);
    assert.ok(totals.every((r) => r.total === 0), "every trajectory reward is 0");
    assert.ok(adv.advantages.some((a) => a.reward! < 0), "some action is penalized");
    const largest = Math.max(...adv.advantages.map((a) => Math.abs(a.advantage)));
    assert.ok(largest <= Math.sqrt(3) + 1e-9, `|A| = ${largest}, not the old 1e5`);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("reinforce++ in training: the step's prompts share one token-weighted whitening", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const { events } = await tinyRun(tmp, "rpp", {
      estimator: { kind: "reinforce++", sigma: "unbiased", eps: 1e-6 },
      group_size: 3,
      batch_size: 2,
    });
    const advantages = ofType(events, "advantages.computed");
    assert.equal(advantages.length, 2);
    assert.deepEqual(advantages[0].baseline.batch, advantages[1].baseline.batch);
    const turns = ofType(events, "turn.generated").filter((t) => t.phase === "rollout");
    const tokens = (p: number, s: number, t: number) =>
      turns.find((x) => x.prompt === p && x.sample === s && x.turn === t)!.responseTokens.length;
    // Independent recomputation: centre each prompt's trajectory scores, whiten over tokens.
    const centred = advantages.flatMap((adv) => {
      const samples = [...new Set(adv.advantages.map((a) => a.sample))];
      const score = (s: number) => {
        const own = adv.advantages.filter((a) => a.sample === s).map((a) => a.reward!);
        return own.reduce((x, y) => x + y, 0) / own.length;
      };
      const mu = samples.reduce((x, s) => x + score(s), 0) / samples.length;
      return adv.advantages.map((a) => ({
        a,
        value: score(a.sample) - mu,
        weight: tokens(adv.prompt, a.sample, a.turn),
      }));
    });
    const n = centred.reduce((s, c) => s + c.weight, 0);
    const mu = centred.reduce((s, c) => s + c.value * c.weight, 0) / n;
    const sigma = Math.sqrt(
      centred.reduce((s, c) => s + c.weight * (c.value - mu) ** 2, 0) / (n - 1),
    );
    assert.equal(advantages[0].baseline.batch!.n, n);
    close(advantages[0].baseline.batch!.mu, mu, 1e-12, "batch mu");
    close(advantages[0].baseline.batch!.sigma, sigma, 1e-12, "batch sigma");
    for (const { a, value } of centred) {
      close(a.advantage, (value - mu) / (sigma + 1e-6), 1e-9, `whitened k${a.sample} t${a.turn}`);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("PPO mini-batches: a recorded split per epoch, ratio exactly 1 only at the first", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const { events } = await tinyRun(tmp, "ppo", {
      estimator: { kind: "grpo" },
      group_size: 4,
      batch_size: 2,
      updates: { mini_batches: 2, epochs: 2 },
    });
    const trained = ofType(events, "turn.generated").filter((t) =>
      t.phase === "rollout" && t.responseTokens.length > 0
    );
    for (const wg of ["solver", "verifier"]) {
      const updates = ofType(events, "gradient_step.applied").filter((u) => u.workerGroup === wg);
      assert.deepEqual(updates.map((u) => [u.update, u.epoch, u.miniBatch]), [
        [0, 0, 0],
        [1, 0, 1],
        [2, 1, 0],
        [3, 1, 1],
      ]);
      const key = (r: { prompt: number; sample: number; turn: number }) =>
        `${r.prompt}:${r.sample}:${r.turn}`;
      const own = trained.filter((t) => t.workerGroup === wg).map(key).sort();
      for (const epoch of [0, 1]) {
        const rows = updates.filter((u) => u.epoch === epoch).flatMap((u) => u.rows!.map(key));
        assert.deepEqual([...rows].sort(), own, `epoch ${epoch} covers every turn once`);
      }
      // Old logprobs recomputed at the weights of update 0: its ratio is exactly 1.
      assert.equal(updates[0].kl, 0);
      assert.equal(updates[0].clipFraction, 0);
      assert.equal(updates[0].oldLogprobs, "recompute");
      for (const u of updates.slice(1)) assert.notEqual(u.kl, 0, `update ${u.update} moved`);
      assert.equal(new Set(updates.map((u) => u.parameterHash)).size, 4);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("temperature: rollout logprobs are of softmax(logits / T), as the update's", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const { events, config } = await tinyRun(tmp, "temp", {
      sampling: { temperature: 0.7, top_p: 1, max_tokens: 40 },
    });
    const updates = ofType(events, "gradient_step.applied");
    assert.ok(updates.length > 0, "no update to check");
    for (const u of updates) {
      assert.equal(u.temperature, 0.7);
      // The recompute before update 0 is an independent full forward (no KV cache) at the same
      // weights; generation's cached decode differs only in float32 rounding.
      assert.ok(u.oldLogprobDrift! < 1e-4, `drift ${u.oldLogprobDrift}`);
    }
    // At T = 1 the same tokens' logprobs are far from the recorded ones.
    const turns = ofType(events, "turn.generated").filter((t) =>
      t.phase === "rollout" && t.workerGroup === "solver" && t.responseTokens.length > 0
    );
    const runtime = await openRuntime("cpu", { threads: 1 });
    const pool = await openPolicyPool(runtime, config.worker_groups, {
      seed: config.seed,
      klCoef: 0,
      aggregation: "token-mean",
      aggregationConstant: config.sampling.max_tokens,
    });
    try {
      const training = turns.map((t) => ({
        agent: t.agent,
        promptTokens: Int32Array.from(t.promptTokens),
        responseTokens: Int32Array.from(t.responseTokens),
        logprobs: Float32Array.from(t.logprobs),
        advantage: 0,
      }));
      const batch = policyBatch(training);
      const solver = pool.groups.get("solver")!;
      const at = async (temperature: number) =>
        responseValues(batch, training, await solver.logprobs(batch, temperature));
      const recorded = training.map((t) => t.logprobs);
      const [tempered, plain] = [await at(0.7), await at(1)];
      const gap = (xs: Float32Array[]) =>
        Math.max(...xs.flatMap((x, i) => [...x].map((v, j) => Math.abs(v - recorded[i][j]))));
      assert.ok(gap(tempered) < 1e-4, `at T = 0.7: ${gap(tempered)}`);
      assert.ok(gap(plain) > 1e-2, `at T = 1: ${gap(plain)}`);
    } finally {
      await pool.release();
      await runtime.close();
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("LoRA dropout: applied in the update, recorded, and replayed bit for bit", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const settings = {
      estimator: { kind: "grpo" },
      group_size: 4,
      batch_size: 2,
      sampling: { temperature: 0.8, top_p: 1, max_tokens: 40 },
      updates: { mini_batches: 2, epochs: 1 },
    };
    const dropout = (rate: number) => (a: AgentInput) => ({
      ...a,
      trainable: { kind: "lora", rank: 4, alpha: 8, dropout: a.id === "verifier" ? rate : 0 },
    });
    const withDropout = await tinyRun(tmp, "drop", settings, dropout(0.1));
    const without = await tinyRun(tmp, "nodrop", settings, dropout(0));
    const hashes = (events: Events, wg: string) =>
      ofType(events, "gradient_step.applied").filter((u) => u.workerGroup === wg).map((u) =>
        u.parameterHash
      );
    const dropoutUpdates = ofType(withDropout.events, "gradient_step.applied");
    assert.deepEqual([...new Set(dropoutUpdates.map((u) => u.workerGroup))].sort(), [
      "solver",
      "verifier",
    ]);
    for (const u of dropoutUpdates) {
      assert.equal(u.loraDropout, u.workerGroup === "verifier" ? 0.1 : 0);
    }
    // The solver has no dropout: its updates are the same; the verifier's differ.
    assert.deepEqual(hashes(withDropout.events, "solver"), hashes(without.events, "solver"));
    assert.notDeepEqual(hashes(withDropout.events, "verifier"), hashes(without.events, "verifier"));

    const runtime = await openRuntime("cpu", { threads: 1 });
    try {
      await using store = await openStore(withDropout.path);
      const report = await replayRun(store, "drop", { runtime });
      assert.equal(report.ok, true);
      assert.equal(report.identicalRun, true, "dropout masks, mini-batches, T: replay identical");
    } finally {
      await runtime.close();
    }
    // And as a user runs it.
    const cli = await runCli("engine/cli/replay.ts", "drop", "--store", withDropout.path);
    const said = cli.stdout + cli.stderr;
    assert.equal(cli.code, 0, said);
    assert.match(said, /identical/);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
