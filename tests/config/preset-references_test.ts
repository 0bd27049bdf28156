/**
 * The presets named after the Dr. MAS scripts take the scripts' values and the code's
 * conventions (langfengQ/DrMAS 19c632b, examples/drmas_trainer/run_math.sh and run_search.sh;
 * verl/trainer/ppo/core_algos.py for torch.std).
 */
import assert from "node:assert/strict";
import { parseConfig, presetInput, presetNames } from "../../engine/config/mod.ts";
import { PRESET_REFERENCES } from "../../engine/config/presets.ts";

const resolved = (name: string) => parseConfig(presetInput(name), name);

Deno.test("refine presets follow run_math.sh: the code's sigma (n - 1), penalty 0.1", () => {
  for (const name of ["refine-drmas", "refine-grpo", "refine-drgrpo"]) {
    const c = resolved(name);
    assert.deepEqual([c.estimator.sigma, c.estimator.eps], ["unbiased", 1e-6], name);
    assert.equal(c.rewards.invalid_action_penalty, 0.1, name);
    assert.equal(c.loss.entropy_coeff, 0, name); // entropy_coeff=0.0, line 64
    assert.equal(c.updates.micro_batch_size, 4, name); // ppo_micro_batch_size_per_gpu, line 37
    // veRL's actor defaults: dual clip 3 (ppo_trainer.yaml line 57), k3 clamped to 10.
    assert.deepEqual([c.loss.clip_ratio_c, c.loss.kl_clamp], [3, 10], name);
  }
});

Deno.test("search-drmas follows run_search.sh: the code's sigma, penalty 0.01 (line 77)", () => {
  const c = resolved("search-drmas");
  assert.deepEqual([c.estimator.kind, c.estimator.sigma], ["dr-mas", "unbiased"]);
  assert.equal(c.rewards.invalid_action_penalty, 0.01);
  assert.equal(c.updates.mini_batches, 5); // ppo_mini_update_num=5, line 59
  // run_search.sh sets no entropy_coeff: the actor default, ppo_trainer.yaml line 59.
  assert.equal(c.loss.entropy_coeff, 0.001);
  assert.equal(c.updates.micro_batch_size, 4); // ppo_micro_batch_size_per_gpu, line 37
});

Deno.test("debate-mada keeps the papers' population sigma (MADA-RL publishes no code)", () => {
  assert.equal(resolved("debate-mada").estimator.sigma, "population");
});

Deno.test("every preset says what it follows, and docs/CONFIG.md's preset table says it too", async () => {
  const docs = await Deno.readTextFile(new URL("../../docs/CONFIG.md", import.meta.url));
  for (const name of presetNames()) {
    const reference = PRESET_REFERENCES[name];
    assert.ok(reference && reference.length > 10, `${name} names no reference`);
    assert.ok(docs.includes(`| \`${name}\` | `) && docs.includes(reference), name);
  }
  assert.deepEqual(Object.keys(PRESET_REFERENCES).sort(), presetNames());
});
