/**
 * Evaluation protocols as configs (same model in every role, one frozen worker group), what the
 * eval's run.started records, and mean ± SEM over seeds on hand-computed values.
 */
import assert from "node:assert/strict";
import { ConfigError, presetInput } from "../../engine/config/mod.ts";
import {
  evalConfig,
  type ModelSource,
  recordedEvalConfig,
  seedStat,
  summarizeSeeds,
} from "../../engine/evaluation/mod.ts";

const dir: ModelSource = { kind: "model-dir", label: "models/m", model: "models/m" };
const base = { benchmarks: ["a.jsonl", "b.parquet"], n: 4, seed: 3, device: "cpu", threads: 1 };

Deno.test("protocols put the same model in every role, in one frozen worker group", () => {
  const single = evalConfig({ ...base, protocol: "single", source: dir });
  assert.deepEqual(single.workflow, { kind: "debate", generators: 1, critics: 0, rounds: 1 });
  assert.deepEqual(single.agents.map((a) => [a.id, a.role, a.wg]), [
    ["generator", "generator", "policy"],
  ]);
  const debatePreset = presetInput("debate-mada");
  assert.equal(single.agents[0].prompt, debatePreset.agents[0].prompt);
  assert.deepEqual(single.evaluation, {
    benchmarks: ["a.jsonl", "b.parquet"],
    n_samples: 4,
    every_steps: 0,
  });
  assert.equal(single.seed, 3);
  assert.equal(single.name, "eval models/m single");

  const debate = evalConfig({ ...base, protocol: "debate", source: dir });
  assert.deepEqual(debate.workflow, debatePreset.workflow);
  assert.equal(debate.agents.length, 6);
  assert.deepEqual(debate.worker_groups.map((g) => [g.id, g.model, g.trainable.kind]), [
    ["policy", "models/m", "frozen"],
  ]);
  assert.deepEqual(debate.worker_groups[0].agents, debate.agents.map((a) => a.id));

  const refine = evalConfig({
    ...base,
    protocol: "refine",
    source: dir,
    sampling: { temperature: 0.5 },
  });
  assert.deepEqual(refine.agents.map((a) => a.role), ["solver", "verifier"]);
  assert.equal(refine.sampling.temperature, 0.5);
  assert.equal(refine.sampling.max_tokens, presetInput("refine-drmas").sampling?.max_tokens);
  assert.throws(
    () => evalConfig({ ...base, protocol: "single", source: dir, sampling: { top_p: 2 } }),
    (e: Error) => e instanceof ConfigError && /sampling\.top_p/.test(e.message),
  );
});

Deno.test("a run's checkpoint keeps the run's prompts (by role) and sampling", () => {
  const run: ModelSource = {
    kind: "run-checkpoint",
    label: "r@2/solver",
    model: "embedded",
    run: "r",
    step: 2,
    workerGroup: "solver",
    trainable: { kind: "lora", rank: 4, alpha: 8, dropout: 0, targets: ["q_proj"] },
    blob: "a".repeat(64),
    parameterHash: "b".repeat(64),
    settings: {
      agents: [{ id: "s", role: "solver", prompt: "My own prompt: {question}" }],
      sampling: { temperature: 0.9, top_p: 0.95, max_tokens: 12, stop: [] },
      fused: ["rms_norm"],
    },
  };
  const config = evalConfig({
    ...base,
    protocol: "refine",
    source: run,
    sampling: { max_tokens: 5 },
  });
  assert.equal(config.agents[0].prompt, "My own prompt: {question}");
  // No verifier in the run: the preset's verifier prompt.
  assert.equal(config.agents[1].prompt, presetInput("refine-drmas").agents[1].prompt);
  assert.deepEqual(config.sampling, { temperature: 0.9, top_p: 0.95, max_tokens: 5, stop: [] });
  assert.equal(config.agents[0].model, "embedded");
  // The run's graphs: its fused decoder parts.
  assert.deepEqual(config.runtime.fused_ops, ["rms_norm"]);

  const recorded = recordedEvalConfig(config, {
    protocol: "refine",
    source: run,
    seeds: [3, 4],
    runs: ["e-seed3", "e-seed4"],
  });
  for (const key of ["tasks", "estimator", "steps", "group_size", "loss", "rewards", "store"]) {
    assert.ok(!(key in recorded), `${key} is a training key`);
  }
  const { settings: _settings, ...model } = run;
  assert.deepEqual(recorded.eval, {
    protocol: "refine",
    model,
    seeds: [3, 4],
    runs: ["e-seed3", "e-seed4"],
  });
  assert.deepEqual(recorded.evaluation, config.evaluation);
});

Deno.test("mean ± SEM over seeds on hand-computed values", () => {
  assert.deepEqual(seedStat([0.25]), { mean: 0.25, sem: null });
  const two = seedStat([0.5, 0.75]);
  assert.equal(two.mean, 0.625);
  // s^2 = 2 * 0.125^2 / 1 = 0.03125; SEM = sqrt(0.03125 / 2) = 0.125.
  assert.equal(two.sem, 0.125);
  const four = seedStat([1, 2, 3, 4]);
  assert.equal(four.mean, 2.5);
  // s^2 = (2.25 + 0.25 + 0.25 + 2.25) / 3 = 5/3; SEM = sqrt(5/12).
  assert.ok(Math.abs(four.sem! - Math.sqrt(5 / 12)) < 1e-15);
  assert.throws(() => seedStat([]), RangeError);

  const rows = summarizeSeeds(
    [{ "x/avg@4": 0.5, "x/pass@4": 1, "y/avg@4": 0, "y/pass@4": 0 }, {
      "x/avg@4": 0.75,
      "x/pass@4": 1,
      "y/avg@4": 0.25,
      "y/pass@4": 0.5,
    }],
    new Map([["x", 2], ["y", 4]]),
    4,
  );
  assert.deepEqual(rows.map((r) => [r.benchmark, r.problems, r.seeds, r.avg, r.pass]), [
    ["x", 2, 2, { mean: 0.625, sem: 0.125 }, { mean: 1, sem: 0 }],
    ["y", 4, 2, { mean: 0.125, sem: 0.125 }, { mean: 0.25, sem: 0.25 }],
  ]);
  assert.throws(
    () => summarizeSeeds([{ "x/avg@4": 0.5 }], new Map([["x", 1]]), 4),
    /seed 0 recorded no avg@4\/pass@4 for x/,
  );
});
