import assert from "node:assert/strict";
import {
  estimateStep,
  ESTIMATOR_NAMES,
  ESTIMATOR_REGISTRY,
  type GroupTrajectory,
  madaAdvantages,
} from "../../engine/advantages/mod.ts";
import { parseConfig, presetInput } from "../../engine/config/mod.ts";
import { madaCriticAdvantages, madaGeneratorAdvantages } from "../../engine/rewards/mod.ts";
import { assertClose } from "./fixture.ts";

const population = { sigma: "population", eps: 1e-6 } as const;

Deno.test("the config enum and train --help are the registry's names (derived, not listed)", async () => {
  for (const kind of ESTIMATOR_NAMES) {
    const raw = presetInput("smoke") as Record<string, unknown>;
    const workflow = kind === "mada" ? presetInput("debate-mada") : { ...raw, estimator: { kind } };
    assert.equal(parseConfig(workflow).estimator.kind, kind);
  }
  assert.throws(
    () => parseConfig({ ...presetInput("smoke") as object, estimator: { kind: "ppo-gae" } }),
    /estimator\.kind/,
  );
  const help = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "engine/cli/train.ts", "--help"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const text = new TextDecoder().decode(help.stdout);
  const lines = text.split("\n").map((l) => l.trim());
  for (const [name, entry] of Object.entries(ESTIMATOR_REGISTRY)) {
    assert.ok(
      lines.some((l) => l.startsWith(`${name} `) && l.includes(entry.summary)),
      `train --help lists ${name}`,
    );
  }
});

Deno.test("REINFORCE++ whitens the step's actions together, weighted by response tokens", () => {
  // Prompt A: scores [1, 0] -> centered [0.5, -0.5], 2 and 4 tokens.
  // Prompt B: scores [1, 1, 0, 0] -> centered [0.5, 0.5, -0.5, -0.5], 1 token each.
  // Batch: weight 10, weighted sum 0.5*2 - 0.5*4 + 0 = -1, mu = -0.1;
  // squares 2*0.36 + 4*0.16 + 2*0.36 + 2*0.16 = 0.72 + 0.64 + 0.72 + 0.32 = 2.4;
  // population sigma sqrt(2.4 / 10), unbiased (masked_var's Bessel on tokens) sqrt(2.4 / 9).
  const one = (sample: number, reward: number, tokens: number): GroupTrajectory => ({
    sample,
    reward,
    actions: [{ agent: "solver", turn: 0, tokens }],
  });
  const a = [one(0, 1, 2), one(1, 0, 4)];
  const b = [one(0, 1, 1), one(1, 1, 1), one(2, 0, 1), one(3, 0, 1)];
  for (const [sigma, divisor] of [["population", 10], ["unbiased", 9]] as const) {
    const [ra, rb] = estimateStep("reinforce++", [a, b], { sigma, eps: 1e-6 });
    assert.equal(ra.batch, rb.batch, "one batch statistic shared by both prompts");
    assertClose(ra.batch!.mu, -0.1, 1e-15);
    assertClose(ra.batch!.sigma, Math.sqrt(2.4 / divisor), 1e-15);
    assert.equal(ra.batch!.n, 10);
    const s = Math.sqrt(2.4 / divisor) + 1e-6;
    assertClose(ra.actions[0].advantage, 0.6 / s, 1e-12);
    assertClose(ra.actions[1].advantage, -0.4 / s, 1e-12);
    assertClose(rb.actions[3].advantage, -0.4 / s, 1e-12);
    assert.equal(ra.scope, "batch");
  }
  // Per prompt (the old defect), B alone would whiten to +-1: not what the batch gives.
  const [alone] = estimateStep("reinforce++", [b], population);
  assert.notEqual(
    alone.actions[0].advantage.toFixed(6),
    estimateStep("reinforce++", [a, b], population)[1].actions[0].advantage.toFixed(6),
  );
});

Deno.test("the MADA-RL estimator gives the rewards module's advantages on the same answers", () => {
  const generator = [{ length: 100, correct: true }, { length: 300, correct: false }, {
    length: 200,
    correct: true,
  }];
  const gen = madaGeneratorAdvantages(generator, population);
  const critics = [{ length: 50, correct: true, generatorAccuracy: 1 / 3 }, {
    length: 70,
    correct: false,
    generatorAccuracy: 1,
  }, { length: 60, correct: true, generatorAccuracy: 0 }];
  const crit = madaCriticAdvantages(critics);
  const group: GroupTrajectory[] = [0, 1, 2].map((s) => ({
    sample: s,
    reward: 0,
    actions: [
      { agent: "g", turn: 0, role: "generator", reward: gen.rewards[s] },
      { agent: "c", turn: 1, role: "critic", reward: crit.rewards[s], baseline: crit.baselines[s] },
    ],
  }));
  const result = madaAdvantages(group, population);
  for (const s of [0, 1, 2]) {
    assertClose(result.actions[2 * s].advantage, gen.advantages[s], 1e-15);
    assertClose(result.actions[2 * s + 1].advantage, crit.advantages[s], 1e-15);
  }
  assert.deepEqual(result.agents.map((a) => a.multiplier), [null, null]);
  const noBaseline = group.map((t) => ({
    ...t,
    actions: t.actions.map((a) => ({ ...a, baseline: undefined })),
  }));
  assert.throws(() => madaAdvantages(noBaseline, population), /baseline.*2\*acc_G/);
});
