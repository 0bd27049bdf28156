import assert from "node:assert/strict";
import type { Architecture } from "../../adapters/hf/mod.ts";
import { buildLogitsGraph, MODEL_IO } from "../../adapters/model/graphs.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { uploadBase } from "../../adapters/model/weights.ts";
import { hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";
import { referenceLogits } from "./reference.ts";

// float32 graph vs float64 reference on logits of magnitude ~1.
const TOLERANCE = 2e-5;

const cases: [Architecture, Record<string, unknown>][] = [
  ["Qwen2ForCausalLM", {}],
  ["Qwen3ForCausalLM", { rope_theta: 1000000 }],
  ["LlamaForCausalLM", { tie_word_embeddings: true, num_key_value_heads: 1 }],
];

for (const [arch, overrides] of cases) {
  Deno.test(`forward ${arch} ${JSON.stringify(overrides)} matches the TS reference, padded both ways`, async () => {
    const model = await tinyModel(arch, overrides);
    const spec = decoderSpec(model.config);
    const seqs = [[3, 17, 250, 9, 44], [8, 1, 99]];
    const width = 5;
    const vocab = model.config.vocabSize;
    await withCpu(async (rt) => {
      const base = uploadBase(rt, spec, model.tensors);
      const session = await rt.load(buildLogitsGraph(spec).model);
      for (const side of ["right", "left"] as const) {
        const tokens = new Int32Array(2 * width);
        const mask = new Float32Array(2 * width);
        const offsets = seqs.map((s) => side === "left" ? width - s.length : 0);
        seqs.forEach((s, r) => {
          tokens.set(s, r * width + offsets[r]);
          mask.fill(1, r * width + offsets[r], r * width + offsets[r] + s.length);
        });
        const out = await session.run({
          ...base.feeds,
          [MODEL_IO.tokens]: hostTensor("int32", [2, width], tokens),
          [MODEL_IO.attentionMask]: hostTensor("float32", [2, width], mask),
        });
        const logits = out.host[MODEL_IO.logits];
        assert.deepEqual(logits.dims, [2, width, vocab]);
        seqs.forEach((s, r) => {
          const want = referenceLogits(model.config, model.tensors, s);
          want.forEach((row, t) => {
            const at = (r * width + offsets[r] + t) * vocab;
            const got = logits.data.subarray(at, at + vocab);
            const diff = maxAbsDiff(got, row);
            assert.ok(diff < TOLERANCE, `${side} row ${r} pos ${t}: max diff ${diff}`);
          });
        });
      }
      await session.release();
      base.release();
    });
  });
}
