import assert from "node:assert/strict";
import {
  type LoraAdapter,
  loraScale,
  type NamedTensor,
  namedTensor,
} from "../../adapters/hf/mod.ts";
import { loraDropoutMasks, trainStepConfig } from "../../adapters/model/graphs.ts";
import { initLoraAdapter } from "../../adapters/model/init.ts";
import { loraSpec } from "../../adapters/model/lora.ts";
import { type DecoderSpec, decoderSpec, trainableParams } from "../../adapters/model/parameters.ts";
import { adapterHostFeeds, baseHostFeeds } from "../../adapters/model/weights.ts";
import { type HostTensor, hostTensor, scalar } from "../../adapters/onnx/runtime/mod.ts";
import { buildTrainStep } from "../../adapters/onnx/train-step/graph.ts";
import { IO } from "../../adapters/onnx/train-step/spec.ts";
import { keyedNormal, tinyModel, withCpu } from "./helpers.ts";
import { logSoftmax64, type LoraBranch, mergeLora, referenceLogits } from "./reference.ts";
import { gradientsFromSums, zeroGradientSums } from "../onnx-train/gradient-sums.ts";

// Two sequences of different lengths, right-padded; every real next-token is a loss token.
const seqs = [[4, 8, 15, 16, 23, 42], [7, 3, 250]];
const width = 5;
const lossTokens = seqs.reduce((n, s) => n + s.length - 1, 0);

/**
 * The train step's objective with advantage 1, old logprob 0 and no clipping, in float64 on the
 * reference: -sum over loss tokens of p(target) / tokens.
 */
function referenceObjective(
  spec: DecoderSpec,
  weights: ReadonlyMap<string, NamedTensor>,
  branch?: (row: number) => LoraBranch,
): number {
  let sum = 0;
  for (const [row, s] of seqs.entries()) {
    const logits = referenceLogits(spec.config, weights, s, branch?.(row));
    for (let t = 0; t + 1 < s.length; t++) sum += Math.exp(logSoftmax64(logits[t])[s[t + 1]]);
  }
  return -sum / lossTokens;
}

function batchFeeds(): Record<string, HostTensor> {
  const dims = [seqs.length, width];
  const tokens = new Int32Array(seqs.length * width);
  const targets = new Int32Array(seqs.length * width);
  const mask = new Float32Array(seqs.length * width);
  seqs.forEach((s, r) => {
    tokens.set(s.slice(0, -1), r * width);
    targets.set(s.slice(1), r * width);
    mask.fill(1, r * width, r * width + s.length - 1);
  });
  return {
    [IO.tokens]: hostTensor("int32", dims, tokens),
    [IO.targets]: hostTensor("int32", dims, targets),
    [IO.attentionMask]: hostTensor("float32", dims, mask),
    [IO.lossMask]: hostTensor("float32", dims, mask),
    [IO.advantages]: hostTensor("float32", dims, new Float32Array(mask.length).fill(1)),
    [IO.oldLogprobs]: hostTensor("float32", dims, new Float32Array(mask.length)),
    [IO.lossDenominator]: scalar(lossTokens),
    [IO.tokenCount]: scalar(lossTokens),
    [IO.clipLow]: scalar(1),
    [IO.clipHigh]: scalar(1e6),
    [IO.klCoef]: scalar(0),
    [IO.temperature]: scalar(1),
    [IO.accumulate]: scalar(0),
  };
}

/** Gradients of the objective from the train step's `accumulate` graph, by parameter name. */
async function graphGradients(
  spec: DecoderSpec,
  params: Record<string, HostTensor>,
  masks: Record<string, HostTensor> = {},
): Promise<Record<string, Float32Array>> {
  const step = buildTrainStep({ ...trainStepConfig(spec) }, "accumulate");
  return await withCpu(async (rt) => {
    const session = await rt.load(step.model);
    const zeros = zeroGradientSums(step);
    const out = await session.run({ ...params, ...batchFeeds(), ...masks, ...zeros });
    await session.release();
    const shapes = Object.fromEntries(trainableParams(spec).map((p) => [p.name, p.shape]));
    return gradientsFromSums(step, out.host, shapes);
  });
}

/** Central difference of `f` in element `i` of `data` (restored afterwards). */
function centralDifference(data: Float32Array, i: number, f: () => number): number {
  // Weights are float32: x ± h rounds by at most ~1e-7, tiny against h; the reference is float64.
  const h = 2 ** -10;
  const x = data[i];
  data[i] = x + h;
  const up = f();
  data[i] = x - h;
  const down = f();
  data[i] = x;
  return (up - down) / (2 * h);
}

function assertClose(got: number, want: number, what: string): void {
  // Gradients here are ~1e-5..1e-3 (probabilities of a random 272-token model): relative check.
  const tol = 1e-9 + 2e-3 * Math.abs(want);
  assert.ok(Math.abs(got - want) < tol, `${what}: graph ${got}, finite difference ${want}`);
}

Deno.test("full fine-tuning gradients match finite differences of the TS reference", async () => {
  const model = await tinyModel("Qwen2ForCausalLM");
  const spec = decoderSpec(model.config);
  const weights = new Map(
    [...model.tensors].map(([k, t]) => [k, namedTensor(k, t.shape, Float32Array.from(t.data))]),
  );
  const grads = await graphGradients(spec, baseHostFeeds(spec, weights));
  const probes: [string, number][] = [
    ["model.embed_tokens.weight", 15 * 16 + 3],
    ["model.layers.0.self_attn.q_proj.bias", 5],
    ["model.layers.0.self_attn.k_proj.weight", 37],
    ["model.layers.1.self_attn.o_proj.weight", 100],
    ["model.layers.1.mlp.down_proj.weight", 333],
    ["model.layers.0.post_attention_layernorm.weight", 7],
    ["lm_head.weight", 16 * 16 + 2],
  ];
  for (const [name, i] of probes) {
    const fd = centralDifference(
      weights.get(name)!.data,
      i,
      () => referenceObjective(spec, weights),
    );
    assertClose(grads[name][i], fd, `${name}[${i}]`);
  }
});

/** A fresh adapter for `spec` with non-zero B, so that A gets a gradient too. */
function busyAdapter(spec: DecoderSpec): LoraAdapter {
  const fresh = initLoraAdapter(spec, keyedNormal(9), "a");
  return {
    ...fresh,
    modules: new Map([...fresh.modules].map(([k, m]) => [k, {
      ...m,
      b: namedTensor(m.b.name, m.b.shape, Float32Array.from(m.b.data, (_, i) => 0.1 * Math.cos(i))),
    }])),
  };
}

Deno.test("LoRA gradients (A and B) match finite differences of the TS reference", async () => {
  const model = await tinyModel("Qwen3ForCausalLM");
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 3, targetModules: ["q_proj", "up_proj"] }),
  );
  const adapter = busyAdapter(spec);
  const grads = await graphGradients(spec, {
    ...baseHostFeeds(spec, model.tensors),
    ...adapterHostFeeds(spec, adapter),
  });
  const scale = loraScale(adapter.config);
  const objective = () => referenceObjective(spec, mergeLora(model.tensors, adapter, scale));
  for (const module of ["model.layers.0.self_attn.q_proj", "model.layers.1.mlp.up_proj"]) {
    const m = adapter.modules.get(module)!;
    for (const [which, tensor] of [["A", m.a], ["B", m.b]] as const) {
      for (const i of [0, 5, tensor.data.length - 1]) {
        const fd = centralDifference(tensor.data, i, objective);
        assertClose(grads[`${module}.lora_${which}.weight`][i], fd, `${module} ${which}[${i}]`);
      }
    }
  }
});

Deno.test("LoRA dropout: gradients under fixed masks match finite differences of the TS reference", async () => {
  const model = await tinyModel("Qwen3ForCausalLM");
  const rate = 0.25;
  const spec = decoderSpec(
    model.config,
    loraSpec({ rank: 2, alpha: 3, targetModules: ["q_proj", "up_proj"], dropout: rate }),
  );
  const adapter = busyAdapter(spec);
  // One fixed mask per module, [rows, width, in]: every third element dropped, others 1/(1-p).
  const masks = new Map(
    loraDropoutMasks(spec).map(({ name, width: inFeatures }, m) => {
      const data = Float32Array.from(
        { length: seqs.length * width * inFeatures },
        (_, i) => (i + m) % 3 === 0 ? 0 : Math.fround(1 / (1 - rate)),
      );
      return [name, { inFeatures, data }];
    }),
  );
  assert.deepEqual([...masks.keys()], [...adapter.modules.keys()], "one mask per LoRA module");
  const grads = await graphGradients(
    spec,
    { ...baseHostFeeds(spec, model.tensors), ...adapterHostFeeds(spec, adapter) },
    Object.fromEntries(
      [...masks].map(([name, m]) => [
        IO.dropoutMask(name),
        hostTensor("float32", [seqs.length, width, m.inFeatures], m.data),
      ]),
    ),
  );
  const branch = (row: number): LoraBranch => ({
    adapter,
    scale: loraScale(adapter.config),
    mask: (module, pos) => {
      const { inFeatures, data } = masks.get(module)!;
      const at = (row * width + pos) * inFeatures;
      return data.subarray(at, at + inFeatures);
    },
  });
  const objective = () => referenceObjective(spec, model.tensors, branch);
  // The masked objective is not the plain one: the masks reach the loss.
  const merged = mergeLora(model.tensors, adapter, loraScale(adapter.config));
  assert.ok(Math.abs(objective() - referenceObjective(spec, merged)) > 1e-6);
  for (const module of ["model.layers.0.self_attn.q_proj", "model.layers.1.mlp.up_proj"]) {
    const m = adapter.modules.get(module)!;
    for (const [which, tensor] of [["A", m.a], ["B", m.b]] as const) {
      for (const i of [0, 5, tensor.data.length - 1]) {
        const fd = centralDifference(tensor.data, i, objective);
        assertClose(grads[`${module}.lora_${which}.weight`][i], fd, `${module} ${which}[${i}]`);
      }
    }
  }
});
