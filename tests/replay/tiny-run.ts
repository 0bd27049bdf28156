/** Shared setup of the replay tests: a random embedded-architecture model and a tiny config. */
import { join } from "node:path";
import {
  type EmbeddedSize,
  initEmbeddedModel,
  saveEmbeddedModel,
} from "../../adapters/model/mod.ts";
import {
  mergeConfig,
  type NormalizedConfig,
  parseConfig,
  presetInput,
} from "../../engine/config/mod.ts";
import { fillNormal, randomStream } from "../../engine/random/mod.ts";

/**
 * Writes a randomly initialised embedded model of `size` under `dir` (no pretraining needed).
 * `small` by default: the same architecture and tokenizer as `base` at about half its CPU time
 * per step (a 2-step run and its replay 2.1 against 3.5 CPU seconds), which the tests of
 * training, replay and its refusals do not need.
 */
export async function randomModel(dir: string, size: EmbeddedSize = "small"): Promise<string> {
  const path = join(dir, "model");
  const tensors = initEmbeddedModel(
    (purpose, out, std) => fillNormal(randomStream({ seed: 5, purpose }), out, { std }),
    size,
  );
  await saveEmbeddedModel(path, tensors, size);
  return path;
}

/** The raw config of a tiny refine run: few steps, few tokens, a checkpoint every step. */
export function tinyConfigInput(model: string, store: string, steps: number) {
  const raw = presetInput("smoke");
  return mergeConfig(raw, {
    agents: (raw.agents as { model: string }[]).map((a) => ({ ...a, model })),
    steps,
    sampling: { temperature: 1, top_p: 1, max_tokens: 6 },
    evaluation: { benchmarks: ["validation"], n_samples: 1, every_steps: 0 },
    checkpoint: { every_steps: 1 },
    runtime: { device: "cpu", threads: 1 },
    store,
  });
}

/** `tinyConfigInput`, normalized. */
export function tinyConfig(model: string, store: string, steps: number): NormalizedConfig {
  return parseConfig(tinyConfigInput(model, store, steps));
}
