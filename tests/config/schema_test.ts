import assert from "node:assert/strict";
import { ConfigError, parseConfig, presetInput, presetNames } from "../../engine/config/mod.ts";
import { assertIssue, issuesOf, minimalConfig } from "./fixture.ts";

Deno.test("a minimal config is completed with the documented defaults", () => {
  const c = parseConfig(minimalConfig());
  assert.equal(c.schema_version, 3);
  assert.equal(c.seed, 0);
  assert.deepEqual(c.estimator, { kind: "dr-mas", sigma: "population", eps: 1e-6 });
  assert.equal(c.group_size, 4);
  assert.deepEqual(c.workflow, { kind: "refine", max_loops: 3 });
  assert.deepEqual(c.tasks, {
    kind: "synthetic-math",
    difficulty: 2,
    seed: 0,
    splits: { train: 256, validation: 64, test: 64 },
  });
  assert.deepEqual(c.agents[0].trainable, {
    kind: "lora",
    rank: 8,
    alpha: 16,
    dropout: 0,
    targets: ["q_proj", "v_proj"],
  });
  assert.equal(c.agents[0].optimizer.lr, 1e-4);
  assert.deepEqual(c.sampling, { temperature: 1, top_p: 1, max_tokens: 256, stop: [] });
  assert.deepEqual(c.rewards, { weights: { accuracy: 1 }, invalid_action_penalty: 0.1 });
  assert.deepEqual(c.loss, {
    clip_eps: 0.2,
    clip_eps_low: 0.2,
    clip_eps_high: 0.2,
    kl_coef: 0,
    clip_ratio_c: 3,
    kl_clamp: 10,
    entropy_coeff: 0,
    aggregation: "token-mean",
  });
  assert.deepEqual(c.updates, {
    mini_batches: 1,
    epochs: 1,
    old_logprobs: "recompute",
    micro_batch_size: null,
  });
  assert.deepEqual(c.evaluation, { benchmarks: ["validation"], n_samples: 16, every_steps: 0 });
  assert.deepEqual(c.runtime, {
    device: "auto",
    threads: 1,
    offload_idle: false,
    fused_ops: [],
  });
  assert.equal(c.store, ".polyrl/events.sqlite");
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.agents[0].trainable));
});

Deno.test("clip_eps_low / clip_eps_high default to clip_eps and set DAPO's clip-higher", () => {
  const base = minimalConfig() as Record<string, unknown>;
  const dapo = parseConfig({ ...base, loss: { clip_eps: 0.2, clip_eps_high: 0.28 } });
  assert.equal(dapo.loss.clip_eps_low, 0.2);
  assert.equal(dapo.loss.clip_eps_high, 0.28);
  const wide = parseConfig({ ...base, loss: { clip_eps: 0.1 } });
  assert.deepEqual([wide.loss.clip_eps_low, wide.loss.clip_eps_high], [0.1, 0.1]);
  assert.throws(
    () => parseConfig({ ...base, loss: { aggregation: "sum" } }),
    (e) => e instanceof ConfigError && e.issues.some((i) => i.key === "loss.aggregation"),
  );
  assert.throws(
    () => parseConfig({ ...base, updates: { mini_batches: 0 } }),
    (e) => e instanceof ConfigError && e.issues.some((i) => i.key === "updates.mini_batches"),
  );
});

Deno.test("every preset is valid, and smoke is small", () => {
  assert.deepEqual(presetNames(), [
    "debate-mada",
    "refine-drgrpo",
    "refine-drmas",
    "refine-grpo",
    "search-drmas",
    "smoke",
  ]);
  for (const name of presetNames()) {
    const c = parseConfig(presetInput(name), name);
    assert.equal(c.name, name);
  }
  const smoke = parseConfig(presetInput("smoke"));
  assert.ok(smoke.steps <= 2 && smoke.group_size <= 2 && smoke.batch_size === 1);
  assert.ok(smoke.sampling.max_tokens <= 16);
  const mada = parseConfig(presetInput("debate-mada"));
  assert.deepEqual(mada.workflow, { kind: "debate", generators: 3, critics: 3, rounds: 2 });
  assert.deepEqual(mada.rewards.weights, { accuracy: 2, length: 1 });
  assert.equal(mada.worker_groups.length, 6);
  assert.equal(parseConfig(presetInput("refine-grpo")).estimator.kind, "grpo");
  const drGrpo = parseConfig(presetInput("refine-drgrpo"));
  assert.equal(drGrpo.estimator.kind, "dr-grpo");
  assert.equal(drGrpo.loss.aggregation, "seq-sum-const");
  assert.equal(parseConfig(presetInput("search-drmas")).updates.mini_batches, 5);
  assert.throws(
    () => presetInput("refine"),
    (e) =>
      e instanceof ConfigError && e.issues[0].key === "preset" &&
      /refine-drmas/.test(e.issues[0].allowed),
  );
});

Deno.test("type, range and enum errors name the key, the value and what is allowed", () => {
  const raw = minimalConfig();
  const bad = {
    ...raw,
    seed: 1.5,
    group_size: 0,
    sampling: { top_p: 0, temperature: "hot" },
    runtime: { device: "gpu" },
    estimator: { sigma: "sample" },
    agents: [
      { ...(raw.agents as object[])[0], id: "Solver", trainable: { kind: "lora", rank: 0 } },
      (raw.agents as object[])[1],
    ],
  };
  const issues = issuesOf(bad);
  assertIssue(issues, "seed", 1.5, /^an integer$/);
  assertIssue(issues, "group_size", 0, /^an integer >= 1$/);
  assertIssue(issues, "sampling.top_p", 0, /^a number > 0$/);
  assertIssue(issues, "sampling.temperature", "hot", /^a number$/);
  assertIssue(
    issues,
    "runtime.device",
    "gpu",
    /^one of "auto", "cpu", "wasm", "webgpu", "webgpu-web"$/,
  );
  assertIssue(issues, "estimator.sigma", "sample", /"population", "unbiased"/);
  assertIssue(issues, "agents[0].id", "Solver", /lowercase letter/);
  assertIssue(issues, "agents[0].trainable.rank", 0, /^an integer >= 1$/);
  const e = new ConfigError("test.json", issues);
  assert.match(
    e.message,
    /agents\[0\]\.trainable\.rank = 0 is not allowed; expected an integer >= 1/,
  );
});

Deno.test("unknown keys list the allowed ones with a did-you-mean; unknown kinds list the kinds", () => {
  const issues = issuesOf({
    ...minimalConfig(),
    workflow: { kind: "refine", max_loop: 2 },
    tasks: { kind: "synthetic-mth" },
    rewards: { weights: { acuracy: 1 } },
    groupsize: 8,
  });
  assertIssue(issues, "workflow.max_loop", 2, /keys kind, max_loops \(did you mean max_loops\?\)/);
  assertIssue(
    issues,
    "tasks.kind",
    "synthetic-mth",
    /"synthetic-math", "synthetic-search", "math-files"/,
  );
  assertIssue(
    issues,
    "rewards.weights.acuracy",
    1,
    /accuracy, length, format \(did you mean accuracy\?\)/,
  );
  assertIssue(issues, "groupsize", 8, /did you mean group_size\?/);
});

Deno.test("missing required keys and non-object input are reported", () => {
  const issues = issuesOf({});
  assertIssue(issues, "tasks", undefined, /an object/);
  assertIssue(issues, "workflow", undefined, /an object/);
  assertIssue(issues, "agents", undefined, /a list/);
  assertIssue(issuesOf([]), "", [], /an object/);
  assertIssue(
    issuesOf({ ...minimalConfig(), agent_to_wg: 5 }),
    "agent_to_wg",
    5,
    /"shared", "separate"; or an object/,
  );
});

Deno.test("messages written into the schema are the allowed text", () => {
  const raw = minimalConfig();
  const issues = issuesOf({
    ...raw,
    tasks: { kind: "math-files", train: "" },
    agents: [{ ...(raw.agents as object[])[0], prompt: "" }, (raw.agents as object[])[1]],
  });
  assertIssue(issues, "tasks.train", "", /^a non-empty file path$/);
  assertIssue(issues, "agents[0].prompt", "", /^a non-empty prompt template$/);
});

Deno.test("loss.clip_ratio_c and loss.kl_clamp: 0 turns them off (null in an extending file would restore the default)", () => {
  const base = minimalConfig() as Record<string, unknown>;
  const off = parseConfig({ ...base, loss: { clip_ratio_c: 0, kl_clamp: 0 } });
  assert.deepEqual([off.loss.clip_ratio_c, off.loss.kl_clamp], [0, 0]);
  for (const clip_ratio_c of [1, 0.5, -1]) {
    assert.throws(
      () => parseConfig({ ...base, loss: { clip_ratio_c } }),
      (e) => e instanceof ConfigError && e.issues.some((i) => i.key === "loss.clip_ratio_c"),
    );
  }
});
