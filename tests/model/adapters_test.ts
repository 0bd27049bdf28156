import assert from "node:assert/strict";
import {
  loadLoraAdapter,
  type LoraAdapter,
  loraScale,
  namedTensor,
  saveLoraAdapter,
} from "../../adapters/hf/mod.ts";
import { buildLogitsGraph, MODEL_IO, trainStepConfig } from "../../adapters/model/graphs.ts";
import { initLoraAdapter } from "../../adapters/model/init.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import {
  adapterFromHost,
  adapterHostFeeds,
  runnerFeeds,
  uploadBase,
} from "../../adapters/model/weights.ts";
import { createGenerator, type TokenChooser } from "../../adapters/model/generate.ts";
import { supervisedBatch } from "../../adapters/model/supervised.ts";
import { type Feed, hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { openTrainStep } from "../../adapters/onnx/train-step/runner.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { keyedNormal, maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";
import { mergeLora, referenceLogits } from "./reference.ts";

function withB(adapter: LoraAdapter, phase: number): LoraAdapter {
  return {
    ...adapter,
    modules: new Map([...adapter.modules].map(([k, m]) => [k, {
      ...m,
      b: namedTensor(
        m.b.name,
        m.b.shape,
        Float32Array.from(m.b.data, (_, i) => 0.1 * Math.sin(i + phase)),
      ),
    }])),
  };
}

Deno.test("several adapters share one uploaded base; each computes its own merged model", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 3, alpha: 6, targetModules: ["q_proj", "o_proj"] }),
  );
  const agents = ["solver", "verifier", "critic"].map((name, i) =>
    withB(initLoraAdapter(spec, keyedNormal(1), name), i)
  );
  const seq = [10, 20, 30, 40];
  const vocab = model.config.vocabSize;
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const session = await rt.load(buildLogitsGraph(spec).model);
    const batch = {
      [MODEL_IO.tokens]: hostTensor("int32", [1, seq.length], seq),
      [MODEL_IO.attentionMask]: hostTensor("float32", [1, seq.length], [1, 1, 1, 1]),
    };
    const results: Float32Array[] = [];
    for (const adapter of [...agents, agents[0]]) {
      const out = await session.run({
        ...base.feeds,
        ...adapterHostFeeds(spec, adapter),
        ...batch,
      });
      results.push(out.host[MODEL_IO.logits].data as Float32Array);
    }
    agents.forEach((adapter, i) => {
      const ref = referenceLogits(
        model.config,
        mergeLora(model.tensors, adapter, loraScale(adapter.config)),
        seq,
      );
      ref.forEach((row, t) => {
        const diff = maxAbsDiff(results[i].subarray(t * vocab, (t + 1) * vocab), row);
        assert.ok(diff < 2e-5, `agent ${i} pos ${t}: ${diff}`);
      });
    });
    // Running other adapters in between leaves the shared base untouched.
    assert.deepEqual(results[3], results[0]);
    assert.ok(maxAbsDiff(results[0], results[1]) > 1e-3, "adapters must differ");
    await session.release();
    base.release();
  });
});

Deno.test("an adapter read back from host tensors saves and loads as a PEFT adapter", async () => {
  const model = await tinyModel("LlamaForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 16, targetModules: ["v_proj"] }),
  );
  const adapter = withB(initLoraAdapter(spec, keyedNormal(4), "x"), 0);
  const host = adapterHostFeeds(spec, adapter);
  const back = adapterFromHost(spec, host, "tiny-llama");
  const dir = await Deno.makeTempDir({ prefix: "polyrl-lora-" });
  try {
    await saveLoraAdapter(dir, back);
    const loaded = await loadLoraAdapter(dir, model.config);
    assert.equal(loaded.config.r, 2);
    assert.equal(loaded.config.alpha, 16);
    assert.equal(loaded.config.baseModel, "tiny-llama");
    const again = adapterHostFeeds(spec, loaded);
    for (const [name, t] of Object.entries(host)) assert.deepEqual(again[name].data, t.data, name);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two agents train LoRA on one shared base; generation follows each agent's weights", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 4, targetModules: ["v_proj"] }),
  );
  const seq = [10, 20, 30, 40];
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const runners = [];
    for (const name of ["solver", "verifier"]) {
      const host = adapterHostFeeds(spec, initLoraAdapter(spec, keyedNormal(2), name));
      const initial = Object.fromEntries(
        Object.entries(host).map(([k, v]) => [k.slice(IO.param("").length), v]),
      );
      runners.push(
        await openTrainStep({
          runtime: rt,
          config: trainStepConfig(spec),
          initial,
          frozen: base.tensors,
        }),
      );
    }
    // The base is bound, not copied: both runners feed the very tensors uploaded once.
    for (const r of runners) {
      for (const [name, t] of Object.entries(base.tensors)) assert.equal(r.frozen[name], t, name);
    }
    const session = await rt.load(buildLogitsGraph(spec).model);
    const logits = async (feeds: Record<string, Feed>) =>
      (await session.run({
        ...feeds,
        [MODEL_IO.tokens]: hostTensor("int32", [1, 4], seq),
        [MODEL_IO.attentionMask]: hostTensor("float32", [1, 4], [1, 1, 1, 1]),
      })).host[MODEL_IO.logits].data as Float32Array;
    const before = await logits(runnerFeeds(spec, runners[0]));

    const batch = supervisedBatch([{ tokens: seq, lossSpans: [[1, seq.length]] }]);
    const m = await runners[0].step(batch, {
      lr: 0.05,
      clipLow: 1,
      clipHigh: 1e6,
      klCoef: 0,
      weightDecay: 0,
      maxGradNorm: 10,
      temperature: 1,
    });
    assert.ok(!m.skipped);
    const trained = await logits(runnerFeeds(spec, runners[0]));
    const untouched = await logits(runnerFeeds(spec, runners[1]));
    assert.ok(maxAbsDiff(trained, before) > 1e-4, "the trained agent's policy moved");
    // B starts at 0, so the untrained agent still computes the base, and the base is intact.
    assert.deepEqual(untouched, before);

    const gen = await createGenerator(rt, spec);
    const greedy: TokenChooser = (l) => l.indexOf(Math.max(...l));
    const [row] = await gen.generate(runnerFeeds(spec, runners[0]), {
      prompts: [seq],
      maxTokens: 1,
      temperature: 0,
      choose: greedy,
    });
    assert.equal(row.tokens[0], greedy(trained.subarray(3 * 272, 4 * 272), 0, 0));
    await gen.release();
    await session.release();
    for (const r of runners) await r.release();
    base.release();
  });
});
