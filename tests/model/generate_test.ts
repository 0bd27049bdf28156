import assert from "node:assert/strict";
import { type LoraAdapter, loraScale, namedTensor } from "../../adapters/hf/mod.ts";
import { createGenerator, type TokenChooser, tokenLogprob } from "../../adapters/model/generate.ts";
import { buildLogitsGraph, MODEL_IO, trainStepConfig } from "../../adapters/model/graphs.ts";
import { initLoraAdapter } from "../../adapters/model/init.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { decoderSpec, trainableParams } from "../../adapters/model/parameters.ts";
import { adapterHostFeeds, uploadBase } from "../../adapters/model/weights.ts";
import { hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { keyedChooser, keyedNormal, maxAbsDiff, tinyModel, withCpu } from "./helpers.ts";
import { logSoftmax64, mergeLora, referenceLogits } from "./reference.ts";

// Logits and logprobs are float32 computations of O(1) values; cached and recomputed attention
// sum in different orders, so they agree to rounding, far below this.
const TOLERANCE = 1e-4;

/** An adapter whose B is non-zero too, so the LoRA path changes the function. */
function busyAdapter(adapter: LoraAdapter): LoraAdapter {
  const modules = new Map([...adapter.modules].map(([k, m]) => {
    const b = Float32Array.from(m.b.data, (_, i) => 0.05 * Math.sin(i + 1));
    return [k, { ...m, b: namedTensor(m.b.name, m.b.shape, b) }];
  }));
  return { ...adapter, modules };
}

const prompts = [[5, 9, 2, 77, 31], [12, 200], [40, 41, 42]];

Deno.test("tokenLogprob is log softmax(logits / T), exactly the untempered value at T = 1", () => {
  const logits = Float32Array.of(0.5, -1.25, 2, 0);
  const untempered = (l: Float32Array, t: number) => {
    const max = Math.max(...l);
    const sum = l.reduce((s, x) => s + Math.exp(x - max), 0);
    return l[t] - max - Math.log(sum);
  };
  for (let t = 0; t < logits.length; t++) {
    assert.equal(tokenLogprob(logits, t, 1), untempered(logits, t));
    const scaled = logits.map((x) => x / 0.5);
    assert.ok(Math.abs(tokenLogprob(logits, t, 0.5) - untempered(scaled, t)) < 1e-12);
  }
  // [0, 1] / 0.5 = [0, 2]: log(e^2 / (1 + e^2)) = -log(1 + e^-2).
  assert.ok(
    Math.abs(tokenLogprob(Float32Array.of(0, 1), 1, 0.5) + Math.log1p(Math.exp(-2))) < 1e-15,
  );
});

Deno.test("KV-cache generation: logits equal full recompute and the TS reference; logprobs are log softmax(logits / T)", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 4, targetModules: ["q_proj", "v_proj", "down_proj"] }),
  );
  const adapter = busyAdapter(initLoraAdapter(spec, keyedNormal(7), "solver"));
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const feeds = { ...base.feeds, ...adapterHostFeeds(spec, adapter) };
    const gen = await createGenerator(rt, spec);
    const seen = new Map<string, Float32Array>();
    const temperature = 0.7;
    const inner = keyedChooser(11, { temperature, topP: 0.95 });
    const choose: TokenChooser = (logits, row, index) => {
      seen.set(`${row}:${index}`, logits.slice());
      return inner(logits, row, index);
    };
    const rows = await gen.generate(feeds, { prompts, maxTokens: 7, temperature, choose });
    assert.deepEqual(rows.map((r) => r.finishReason), ["length", "length", "length"]);

    // Same draws, same tokens: generation is a pure function of its inputs.
    const again = await gen.generate(feeds, {
      prompts,
      maxTokens: 7,
      temperature,
      choose: keyedChooser(11, { temperature, topP: 0.95 }),
    });
    assert.deepEqual(again.map((r) => r.tokens), rows.map((r) => r.tokens));

    const merged = mergeLora(model.tensors, adapter, loraScale(adapter.config));
    const full = await rt.load(buildLogitsGraph(spec).model);
    const vocab = model.config.vocabSize;
    for (let r = 0; r < prompts.length; r++) {
      const seq = [...prompts[r], ...rows[r].tokens];
      const out = await full.run({
        ...feeds,
        [MODEL_IO.tokens]: hostTensor("int32", [1, seq.length], seq),
        [MODEL_IO.attentionMask]: hostTensor("float32", [1, seq.length], seq.map(() => 1)),
      });
      const ref = referenceLogits(model.config, merged, seq);
      rows[r].tokens.forEach((token, i) => {
        const pos = prompts[r].length - 1 + i;
        const recomputed = out.host[MODEL_IO.logits].data.subarray(pos * vocab, (pos + 1) * vocab);
        const cached = seen.get(`${r}:${i}`)!;
        assert.ok(maxAbsDiff(cached, recomputed) < TOLERANCE, `row ${r} token ${i} cache`);
        assert.ok(maxAbsDiff(cached, ref[pos]) < TOLERANCE, `row ${r} token ${i} reference`);
        // The sampling policy softmax(logits / T) of the float64 reference, within TOLERANCE.
        const want = logSoftmax64(ref[pos].map((x) => x / temperature))[token];
        assert.ok(Math.abs(rows[r].logprobs[i] - want) < TOLERANCE, `row ${r} token ${i} logprob`);
      });
    }
    await full.release();
    await gen.release();
    base.release();
  });
});

Deno.test("logprobs reported by generation equal the train step's recomputation at the same T, token by token", async () => {
  const model = await tinyModel("Qwen3ForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 2, targetModules: ["k_proj"] }),
  );
  const adapter = busyAdapter(initLoraAdapter(spec, keyedNormal(3), "critic"));
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const adapterFeeds = adapterHostFeeds(spec, adapter);
    const gen = await createGenerator(rt, spec);
    const temperature = 0.8;
    const rows = await gen.generate({ ...base.feeds, ...adapterFeeds }, {
      prompts: prompts.slice(0, 2),
      maxTokens: 5,
      temperature,
      choose: keyedChooser(5, { temperature, topP: 1 }),
    });
    const step = buildTrainStep({ ...trainStepConfig(spec) }, "fused");
    const session = await rt.load(step.model);
    // Right-padded batch of prompt + response, as the trainer feeds it.
    const seqs = rows.map((r, i) => [...prompts[i], ...r.tokens]);
    const width = Math.max(...seqs.map((s) => s.length)) - 1;
    const tokens = new Int32Array(seqs.length * width);
    const targets = new Int32Array(seqs.length * width);
    const mask = new Float32Array(seqs.length * width);
    const old = new Float32Array(seqs.length * width);
    seqs.forEach((s, r) => {
      tokens.set(s.slice(0, -1), r * width);
      targets.set(s.slice(1), r * width);
      mask.fill(1, r * width, r * width + s.length - 1);
      old.set(rows[r].logprobs, r * width + prompts[r].length - 1);
    });
    const dims = [seqs.length, width];
    const fixed = {
      ...base.feeds,
      ...Object.fromEntries(
        Object.entries(adapterFeeds).map(([k, v]) => [k, v]),
      ),
      [IO.tokens]: hostTensor("int32", dims, tokens),
      [IO.targets]: hostTensor("int32", dims, targets),
      [IO.attentionMask]: hostTensor("float32", dims, mask),
      [IO.advantages]: hostTensor("float32", dims, new Float32Array(tokens.length).fill(1)),
      [IO.oldLogprobs]: hostTensor("float32", dims, old),
      [IO.lossDenominator]: scalar(1),
      [IO.tokenCount]: scalar(1),
      [IO.clipLow]: scalar(0.2),
      [IO.clipHigh]: scalar(0.2),
      [IO.klCoef]: scalar(0),
      [IO.temperature]: scalar(temperature),
      [IO.lr]: scalar(0),
      [IO.weightDecay]: scalar(0),
      [IO.maxGradNorm]: scalar(1),
      [IO.adamStep]: scalar(0),
      ...Object.fromEntries(
        trainableParams(spec).flatMap((p) => {
          const zeros = hostTensor("float32", p.shape, new Float32Array(p.shape[0] * p.shape[1]));
          return [[IO.adamM(p.name), zeros], [IO.adamV(p.name), zeros]];
        }),
      ),
    };
    let checked = 0;
    for (let r = 0; r < seqs.length; r++) {
      for (let i = 0; i < rows[r].tokens.length; i++) {
        // One loss token per run: approx_kl is then exactly old_logprob - recomputed logprob.
        const lossMask = new Float32Array(tokens.length);
        lossMask[r * width + prompts[r].length - 1 + i] = 1;
        const out = await session.run({
          ...fixed,
          [IO.lossMask]: hostTensor("float32", dims, lossMask),
        });
        const gap = out.host[IO.approxKl].data[0];
        assert.ok(Math.abs(gap) < TOLERANCE, `row ${r} token ${i}: old - new = ${gap}`);
        checked++;
      }
    }
    assert.equal(checked, rows.reduce((n, r) => n + r.tokens.length, 0));
    await session.release();
    await gen.release();
    base.release();
  });
});

Deno.test("prefix sharing: rows with one prompt share its prefill and give what unshared rows give", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config, null);
  await withCpu(async (rt) => {
    const base = uploadBase(rt, spec, model.tensors);
    const gen = await createGenerator(rt, spec);
    // A group's samples: the same prompt four times, with another prompt between them.
    const group = [prompts[0], prompts[1], prompts[0], prompts[0], prompts[2], prompts[0]];
    const run = (sharePrompts: boolean) =>
      gen.generate(base.feeds, {
        prompts: group,
        maxTokens: 6,
        temperature: 0.8,
        choose: keyedChooser(3, { temperature: 0.8, topP: 1 }),
        sharePrompts,
      });
    const shared = await run(true);
    const separate = await run(false);
    assert.deepEqual(shared.map((r) => r.tokens), separate.map((r) => r.tokens));
    // The same rows through a prefill of 3 distinct prompts instead of 6: a kernel's blocking
    // depends on the batch, so a row's float32 sums may round differently (seen: 1e-7).
    shared.forEach((r, i) =>
      assert.ok(maxAbsDiff(r.logprobs, separate[i].logprobs) < 1e-5, `row ${i} logprobs`)
    );
    // Different draws per row: the rows that share a prompt still sample their own tokens.
    assert.notDeepEqual(shared[0].tokens, shared[2].tokens);
    await gen.release();
    base.release();
  });
});
