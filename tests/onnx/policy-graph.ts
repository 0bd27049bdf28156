/**
 * A small clipped-policy-gradient graph (embedding, Gemm, log-softmax, shifted token pick, PPO
 * clip, masked mean) and its gradients: the shape of what train steps emit, used to check which
 * ops the compiler emits and where onnxruntime places them.
 */
import * as onnx from "../../adapters/onnx/mod.ts";

/** Vocabulary and hidden sizes of the graph. */
export const VOCAB = 16;
export const HIDDEN = 8;

/** Builds the graph with outputs loss, g_emb, g_w, g_b. */
export function policyGraph(): onnx.Graph {
  const g = new onnx.Graph("policy");
  const ids = g.input("ids", "int32", ["batch", "seq"]);
  const mask = g.input("mask", "float32", ["batch", "seq-1"]);
  const oldLogp = g.input("old_logp", "float32", ["batch", "seq-1"]);
  const emb = g.input("emb", "float32", [VOCAB, HIDDEN]);
  const w = g.input("w", "float32", [HIDDEN, VOCAB]);
  const b = g.input("b", "float32", [VOCAB]);
  const hidden = onnx.reshape(onnx.tanh(onnx.gather(emb, ids)), [-1, HIDDEN]);
  const logits = onnx.reshape(onnx.gemm(hidden, w, b), ["batch", "seq", VOCAB]);
  const logp = onnx.logSoftmax(onnx.slice(logits, [0], [-1], [1]), -1);
  const next = onnx.unsqueeze(onnx.slice(ids, [1], [onnx.SLICE_END], [1]), [2]);
  const picked = onnx.squeeze(onnx.gatherElements(logp, next, 2), [2]);
  const ratio = onnx.exp(onnx.sub(picked, oldLogp));
  const objective = onnx.min(onnx.mul(ratio, mask), onnx.mul(onnx.clip(ratio, 0.8, 1.2), mask));
  const loss = onnx.neg(onnx.div(onnx.reduceSum(objective), onnx.reduceSum(mask)));
  const [gEmb, gW, gB] = onnx.gradients(g, loss, [emb, w, b]);
  g.output(loss, "loss");
  g.output(gEmb, "g_emb");
  g.output(gW, "g_w");
  g.output(gB, "g_b");
  return g;
}

/** Deterministic feeds for a batch of 2 sequences of 5 tokens. */
export function policyFeeds(): Record<
  string,
  { dtype: "int32" | "float32"; data: Int32Array | Float32Array; dims: number[] }
> {
  const wave = (n: number, f: (i: number) => number) =>
    Float32Array.from({ length: n }, (_, i) => f(i));
  return {
    ids: {
      dtype: "int32",
      data: Int32Array.from({ length: 10 }, (_, i) => (i * 7) % VOCAB),
      dims: [2, 5],
    },
    mask: { dtype: "float32", data: new Float32Array([1, 1, 1, 0, 1, 1, 0, 0]), dims: [2, 4] },
    old_logp: { dtype: "float32", data: wave(8, (i) => -2.5 + 0.1 * i), dims: [2, 4] },
    emb: { dtype: "float32", data: wave(VOCAB * HIDDEN, Math.sin), dims: [VOCAB, HIDDEN] },
    w: {
      dtype: "float32",
      data: wave(VOCAB * HIDDEN, (i) => 0.3 * Math.cos(i)),
      dims: [HIDDEN, VOCAB],
    },
    b: { dtype: "float32", data: wave(VOCAB, (i) => i / VOCAB), dims: [VOCAB] },
  };
}
