/**
 * DecoderSpec's fused: every RMSNorm as one SimplifiedLayerNormalization node, every RoPE as one
 * RotaryEmbedding. On each backend (a child process per backend: fused-ops-child.ts) the fused
 * decoder's logits match the plain-JS reference, greedy generation through the KV cache picks the
 * composed form's tokens (on cpu), supervised steps train as the composed form does within float32
 * rounding, and on cpu and the native webgpu the fused form repeats to the bit; the graphs hold one
 * node per norm instead of seven and one per rotation instead of eight.
 */
import assert from "node:assert/strict";
import { decoder, type DecoderMode } from "../../adapters/model/decoder.ts";
import {
  allParams,
  type DecoderSpec,
  decoderSpec,
  type FusedOp,
} from "../../adapters/model/parameters.ts";
import { Graph } from "../../adapters/onnx/mod.ts";
import { softwareVulkanEnv, softwareVulkanVariable } from "../../adapters/onnx/runtime/mod.ts";
import { IO } from "../../adapters/onnx/train-step/mod.ts";
import { webgpuSkipReason, withRuntime } from "../onnx-train/backends.ts";
import {
  assertGenerationsAgree,
  type BackendTrace,
  backendTrace,
  FUSABLE_HEADS,
  TRACE_PROMPT,
} from "./backend-trace.ts";
import { maxAbsDiff, tinyModel } from "./helpers.ts";
import { referenceLogits } from "./reference.ts";

const model = await tinyModel("Qwen3ForCausalLM", FUSABLE_HEADS);
const vulkan = softwareVulkanEnv();
/** Backends, and whether the fused trace runs twice there to show it repeats to the bit. */
const backends = [
  { name: "cpu", skip: null, env: {}, repeat: true },
  { name: "wasm", skip: null, env: {}, repeat: false },
  { name: "webgpu-web", skip: webgpuSkipReason, env: {}, repeat: false },
  {
    name: "webgpu",
    skip: vulkan ? null : `${softwareVulkanVariable} is unset (CI sets it)`,
    env: vulkan ?? {},
    repeat: true,
  },
] as const;

/** The composed form on cpu, what every backend's fused form is held to (once per process). */
let composedOnCpu: Promise<BackendTrace> | null = null;
const composed = () =>
  composedOnCpu ??= withRuntime(
    "cpu",
    (rt) => backendTrace(rt, decoderSpec(model.config), model, 3),
  );

for (const { name, skip, env, repeat } of backends) {
  Deno.test({
    name: `fused ops on ${name}: the reference's logits, the composed form's tokens and losses` +
      (skip ? ` (skipped: ${skip})` : ""),
    ignore: skip !== null,
    fn: async () => {
      const out = await Deno.makeTempFile({ suffix: ".json" });
      try {
        const script = new URL("./fused-ops-child.ts", import.meta.url).pathname;
        const child = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", script, name, out, repeat ? "2" : "1"],
          env,
          stderr: "piped",
        }).output();
        assert.ok(child.success, new TextDecoder().decode(child.stderr));
        const got = JSON.parse(await Deno.readTextFile(out)) as {
          backend: string;
          traces: BackendTrace[];
        };
        assert.equal(got.backend, name);
        const [fused, again] = got.traces;
        const vocab = model.config.vocabSize;
        referenceLogits(model.config, model.tensors, TRACE_PROMPT).forEach((row, t) => {
          const diff = maxAbsDiff(fused.logits.slice(t * vocab, (t + 1) * vocab), row);
          assert.ok(diff < 2e-5, `position ${t}: ${diff}`);
        });
        const reference = await composed();
        // Prefill and decode through both caches: GroupQueryAttention where the cache grows.
        assertGenerationsAgree(fused, reference, 2e-5);
        // Backends and forms sum in different orders: losses after updates agree to ~1e-5.
        assert.ok(
          maxAbsDiff(fused.losses, reference.losses) < 1e-4,
          `${fused.losses} vs ${reference.losses}`,
        );
        assert.ok(fused.losses[2] < fused.losses[0], "it trains");
        if (repeat) assert.deepEqual(again, fused, "the fused form repeats to the bit");
      } finally {
        await Deno.remove(out);
      }
    },
  });
}

/** Node counts by op type of the decoder in `mode` (full by default). */
function opCounts(spec: DecoderSpec, mode: DecoderMode = "full"): Map<string, number> {
  const c = spec.config;
  const g = new Graph("forward");
  const decoding = mode === "decode" || mode === "append";
  const seq = decoding ? 1 : "seq";
  const tokens = g.input("tokens", "int32", ["batch", seq]);
  const attentionMask = g.input("attention_mask", "float32", ["batch", decoding ? "past+1" : seq]);
  const params = Object.fromEntries(
    allParams(spec).map((p) => [p.name, g.input(IO.param(p.name), "float32", p.shape)]),
  );
  const cache = ["batch", c.numKvHeads, "past", c.headDim];
  const past = decoding
    ? Array.from({ length: c.numLayers }, (_, i) => ({
      key: g.input(`past_key:${i}`, "float32", cache),
      value: g.input(`past_value:${i}`, "float32", cache),
    }))
    : undefined;
  decoder(spec, { params, tokens, attentionMask, past }, mode);
  const counts = new Map<string, number>();
  for (const n of g.nodes) counts.set(n.spec.type, (counts.get(n.spec.type) ?? 0) + 1);
  return counts;
}

/** Constants (eps, a reduction's axes) are shared within a graph; the computing nodes. */
const computing = (m: Map<string, number>) =>
  [...m].filter(([op]) => op !== "Constant").reduce((n, [, count]) => n + count, 0);

Deno.test("fused ops: one node per norm for seven, one per rotation for eight", () => {
  const c = model.config;
  // Two per layer, the final one, and Qwen3's per-head q and k norms; q and k rotated per layer.
  const norms = 2 * c.numLayers + 1 + (c.qkNorm ? 2 * c.numLayers : 0);
  const rotations = 2 * c.numLayers;
  const total = computing;
  const composed = opCounts(decoderSpec(c));
  const withFused = (fused: FusedOp[]) => opCounts(decoderSpec(c, null, { fused }));
  const norm = withFused(["rms_norm"]);
  assert.equal(norm.get("SimplifiedLayerNormalization"), norms);
  assert.equal(total(composed) - total(norm), 6 * norms);
  const rope = withFused(["rotary_embedding"]);
  assert.equal(rope.get("RotaryEmbedding"), rotations);
  // Eight nodes become four: to one sequence of tokens, the op, x's shape, and back; the two
  // tables' reshapes are shared by the layers.
  assert.equal(total(composed) - total(rope), 4 * rotations - 2);
  assert.equal(composed.get("SimplifiedLayerNormalization"), undefined);
  assert.equal(composed.get("RotaryEmbedding"), undefined);
  assert.throws(
    () => decoderSpec(c, null, { fused: ["flash" as FusedOp] }),
    /flash is not a fusable part/,
  );
});

Deno.test("fused ops: attention is one node per layer in the decode step", () => {
  const c = model.config;
  const attention = decoderSpec(c, null, { fused: ["attention"] });
  const saved = (config: typeof c) =>
    computing(opCounts(decoderSpec(config), "decode")) -
    computing(opCounts(decoderSpec(config, null, { fused: ["attention"] }), "decode"));
  const deeper = { ...c, numLayers: c.numLayers + 1 };
  assert.equal(opCounts(attention, "decode").get("GroupQueryAttention"), c.numLayers);
  // Per layer, the scale, five transposes, two matmuls, two unsqueezes, the bias' Add, Softmax
  // and two concatenations become the op and two reshapes more (q, k and v to [batch, seq, heads
  // x headDim] where the composed form reshapes q to its kv heads' groups; no kernel); once per
  // graph, the op's lengths and the bias' squeeze.
  assert.equal(saved(deeper) - saved(c), 11);
  // Prefill stays composed (the native WebGPU kernel is wrong on prompts of 32 tokens or more),
  // the train step differentiates the full form, and the host keeps the append form's cache.
  for (const mode of ["prefill", "full", "append"] as const) {
    assert.equal(opCounts(attention, mode).get("GroupQueryAttention"), undefined, mode);
  }
  const narrowHeads = { ...c, headDim: 4 };
  assert.throws(
    () => decoderSpec(narrowHeads, null, { fused: ["attention"] }),
    /attention needs a head_dim that is a multiple of 8 .* is 4/,
  );
});
