/**
 * The estimators against a numpy transcription of the Dr. MAS code (drmas_reference.py), on
 * 1,000 random steps: ties, invalid actions (penalized action rewards), agents with one action,
 * groups of one, several actions of one agent in a trajectory, uneven token counts. Run under
 * the code's conventions (`sigma: unbiased`, eps 1e-6). Skipped, with the reason, where python3
 * has no numpy (CI installs it).
 */
import assert from "node:assert/strict";
import {
  estimateStep,
  type EstimatorOptions,
  type GroupTrajectory,
} from "../../engine/advantages/mod.ts";
import { mulberry32 } from "../support/mulberry32.ts";

const CODE: EstimatorOptions = { sigma: "unbiased", eps: 1e-6 };
const STEPS = 1000;

function randomSteps(seed: number): GroupTrajectory[][][] {
  const rand = mulberry32(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const agents = ["solver", "verifier", "refiner"];
  return Array.from(
    { length: STEPS },
    () =>
      Array.from({ length: 1 + Math.floor(rand() * 3) }, () => {
        const size = pick([1, 2, 3, 4, 5, 8]);
        const binary = rand() < 0.7; // accuracy rewards tie often
        return Array.from({ length: size }, (_, sample) => {
          const reward = binary ? (rand() < 0.5 ? 1 : 0) : Math.round(rand() * 1000) / 1000;
          const penalty = pick([0.1, 0.01]);
          const actions = Array.from({ length: 1 + Math.floor(rand() * 5) }, (_, turn) => ({
            agent: turn === 0 ? "solver" : pick(agents),
            turn,
            tokens: 1 + Math.floor(rand() * 20),
            ...(rand() < 0.2 ? { reward: reward - penalty } : {}),
          }));
          return { sample, reward, actions };
        });
      }),
  );
}

/** Per step and estimator, each row's advantage; null where the code raises. */
async function reference(
  steps: GroupTrajectory[][][],
): Promise<Record<string, number[] | null>[]> {
  const child = new Deno.Command("python3", {
    args: [new URL("./drmas_reference.py", import.meta.url).pathname],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(JSON.stringify(steps.map((groups) => ({ groups })))));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

const numpy = await new Deno.Command("python3", { args: ["-c", "import numpy"] }).output()
  .then((o) => o.success, () => false);

Deno.test({
  name: "grpo, dr-mas, dr-grpo, rloo and reinforce++ give the Dr. MAS code's advantages",
  ignore: !numpy,
  fn: async () => {
    const steps = randomSteps(20261206);
    const expected = await reference(steps);
    for (const name of ["grpo", "dr-mas", "dr-grpo", "rloo", "reinforce++"]) {
      let worst = 0;
      steps.forEach((groups, s) => {
        const got = estimateStep(name, groups, CODE).flatMap((g) => g.actions);
        const want = expected[s][name];
        if (want === null) {
          // One response token in the whole batch: the code's masked_var raises; nothing to
          // whiten against, so this project gives 0.
          assert.deepEqual(got.map((a) => a.advantage), got.map(() => 0), `${name} step ${s}`);
          return;
        }
        assert.equal(got.length, want.length, `${name} step ${s}: row count`);
        // REINFORCE++: the code whitens by rsqrt(var + 1e-8), this project by 1 / (sigma + eps)
        // as every estimator; they differ by about eps / sigma + 0.5e-8 / sigma^2 relative.
        const sigma = estimateStep(name, groups, CODE)[0].batch?.sigma;
        const tol = sigma === undefined ? 1e-9 : 1e-9 + 2 * (1e-6 / sigma + 0.5e-8 / sigma ** 2);
        got.forEach((a, i) => {
          const err = Math.abs(a.advantage - want[i]) / Math.max(1, Math.abs(want[i]));
          worst = Math.max(worst, err);
          assert.ok(
            err <= tol,
            `${name} step ${s} row ${i} (${a.agent}, sample ${a.sample}, turn ${a.turn}): ` +
              `got ${a.advantage}, the code gives ${want[i]}\n${JSON.stringify(groups)}`,
          );
        });
      });
      console.log(`${name}: largest relative difference ${worst.toExponential(2)}`);
    }
  },
});
