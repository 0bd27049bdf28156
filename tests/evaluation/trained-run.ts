/**
 * A real short training run through `deno task train` (a subprocess), shared by the export and
 * team-evaluation tests: one step of GRPO on the embedded model with answers long enough to be
 * graded, so both worker groups get a gradient and move (a fresh adapter's B is 0: without a
 * gradient an exported adapter would change nothing and a test could not tell it from the base).
 * The solver trains a LoRA adapter on attention and MLP projections, the verifier its full weights.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/run-cli.ts";

/** The solver's LoRA settings. */
export const SOLVER_LORA = Object.freeze({
  rank: 4,
  alpha: 8,
  targets: Object.freeze(["q_proj", "v_proj", "gate_proj", "down_proj"]),
});

/** The run's config file contents. */
export function trainedRunConfig(): Record<string, unknown> {
  return {
    extends: "smoke",
    steps: 1,
    batch_size: 2,
    group_size: 4,
    estimator: { kind: "grpo" },
    sampling: { temperature: 1, top_p: 1, max_tokens: 40 },
    agents: [
      {
        id: "solver",
        role: "solver",
        prompt: "{question}{revision}",
        model: "embedded",
        trainable: { kind: "lora", ...SOLVER_LORA, targets: [...SOLVER_LORA.targets] },
        optimizer: { lr: 0.01 },
      },
      {
        id: "verifier",
        role: "verifier",
        prompt: "Check the solution. End with `verdict: accept` or `verdict: revise`.\n\n" +
          "Problem: {question}\n\nSolution: {solution}",
        model: "embedded",
        trainable: { kind: "full" },
        optimizer: { lr: 0.001 },
      },
    ],
    runtime: { device: "cpu", threads: 1 },
  };
}

/**
 * Trains run `runId` into `storePath` (config written into `dir`) and returns the final
 * parameter hash the run printed per worker group.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { trainRun } from "./trained-run.ts";
 *
 * const tmp = await Deno.makeTempDir();
 * const hashes = await trainRun(tmp, join(tmp, "events.sqlite"), "exp"); // by worker group
 * ```
 */
export async function trainRun(
  dir: string,
  storePath: string,
  runId: string,
): Promise<Record<string, string>> {
  const configPath = join(dir, "config.json");
  await Deno.writeTextFile(configPath, JSON.stringify(trainedRunConfig()));
  const trained = await runCli(
    "engine/cli/train.ts",
    "--config",
    configPath,
    "--store",
    storePath,
    "--run-id",
    runId,
  );
  assert.equal(trained.code, 0, trained.stderr);
  return Object.fromEntries(
    [...trained.stdout.matchAll(/^final parameters (\S+)\s+([0-9a-f]{64})$/gm)].map((m) => [
      m[1],
      m[2],
    ]),
  );
}
