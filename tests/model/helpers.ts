/**
 * Shared fixtures of the model tests: a tiny HF checkpoint loaded through adapters/hf, a cpu
 * runtime, keyed-draw noise and token choosers built on engine/random.
 */
import { type Architecture, type HfModel, loadHfModel } from "../../adapters/hf/mod.ts";
import type { NormalFill } from "../../adapters/model/init.ts";
import type { TokenChooser } from "../../adapters/model/generate.ts";
import { openRuntime, type Runtime } from "../../adapters/onnx/runtime/mod.ts";
import { fillNormal, randomStream, sampleLogits } from "../../engine/random/mod.ts";
import { writeTinyCheckpoint } from "../hf/tiny-checkpoint.ts";

/** Writes the tiny fixture checkpoint to a temp dir and loads it with adapters/hf (no network). */
export async function tinyModel(
  architecture: Architecture = "Qwen2ForCausalLM",
  configOverrides: Record<string, unknown> = {},
): Promise<HfModel> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-model-" });
  try {
    // The fixture default: BF16 weights in several shards, read back widened to float32.
    await writeTinyCheckpoint(dir, { architecture, configOverrides });
    return await loadHfModel(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Opens a 2-thread cpu runtime for `body` and closes it afterwards. */
export async function withCpu<T>(body: (rt: Runtime) => Promise<T>): Promise<T> {
  const runtime = await openRuntime("cpu", { threads: 2 });
  try {
    return await body(runtime);
  } finally {
    await runtime.close();
  }
}

/** Normal noise keyed by (seed, purpose): what the engine hands the model layer. */
export function keyedNormal(seed: number): NormalFill {
  return (purpose, out, std) => {
    fillNormal(randomStream({ seed, purpose }), out, { std });
  };
}

/** Temperature / top-p sampling, draw index = token index, one stream per row. */
export function keyedChooser(
  seed: number,
  options: { temperature: number; topP: number },
): TokenChooser {
  const streams = new Map<number, ReturnType<typeof randomStream>>();
  return (logits, row, index) => {
    let s = streams.get(row);
    if (!s) {
      s = randomStream({ seed, purpose: "sample-token", sample: row });
      streams.set(row, s);
    }
    return sampleLogits(s, index, logits, options);
  };
}

/** Largest |a - b| over two equal-length arrays. */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`lengths ${a.length} and ${b.length} differ`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}
