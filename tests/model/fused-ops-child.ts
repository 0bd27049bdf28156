/**
 * Child of fused-ops_test.ts: on the backend named by the first argument, the tiny Qwen3 (per-head
 * q and k norms beside the layer norms) with every fusable part fused (RMSNorm, RoPE) and composed: logits of
 * a prompt, greedy generation through the KV cache, and three supervised steps' losses (twice for
 * the fused form, to show it repeats). Writes the JSON to the file named by the second argument.
 * A child process, so that the native webgpu backend gets its software Vulkan environment.
 */
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO } from "../../adapters/model/graphs.ts";
import { type DecoderSpec, decoderSpec, FUSED_OPS } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer } from "../../adapters/model/supervised.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { type BackendName, hostTensor, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { tinyModel } from "./helpers.ts";

const [backend, out] = Deno.args as [BackendName, string];
const model = await tinyModel("Qwen3ForCausalLM");
const seq = [3, 17, 250, 9, 44];
const greedy: TokenChooser = (logits) => logits.indexOf(Math.max(...logits));
const initial = Object.fromEntries(
  [...model.tensors.values()].map((t) => [t.name, hostTensor("float32", t.shape, t.data)]),
);
const examples = [
  { tokens: [10, 11, 12, 13, 14, 15], lossSpans: [[2, 6] as const] },
  { tokens: [20, 21, 22, 23], lossSpans: [[1, 4] as const] },
];

const rt = await openRuntime(backend, { threads: 2 });
async function run(spec: DecoderSpec) {
  const base = uploadBase(rt, spec, model.tensors);
  const session = await rt.load(buildLogitsGraph(spec).model);
  const logits = (await session.run({
    ...base.feeds,
    [MODEL_IO.tokens]: hostTensor("int32", [1, seq.length], seq),
    [MODEL_IO.attentionMask]: hostTensor("float32", [1, seq.length], seq.map(() => 1)),
  })).host[MODEL_IO.logits].data as Float32Array;
  await session.release();
  const gen = await createGenerator(rt, spec);
  const rows = await gen.generate(base.feeds, {
    prompts: [[1, 2, 3], [4]],
    maxTokens: 4,
    temperature: 0,
    choose: greedy,
  });
  await gen.release();
  base.release();
  const trainer = await openSupervisedTrainer(rt, spec, initial);
  const losses = [];
  for (let i = 0; i < 3; i++) {
    losses.push((await trainer.step(examples, { lr: 1e-2, weightDecay: 0, maxGradNorm: 10 })).loss);
  }
  await trainer.release();
  return { logits: [...logits], tokens: rows.map((r) => r.tokens), losses };
}
const fusedSpec = decoderSpec(model.config, null, { fused: FUSED_OPS });
const result = {
  backend: rt.info.backend,
  seq,
  fused: await run(fusedSpec),
  fusedAgain: await run(fusedSpec),
  composed: await run(decoderSpec(model.config)),
};
await rt.close();
await Deno.writeTextFile(out, JSON.stringify(result));
