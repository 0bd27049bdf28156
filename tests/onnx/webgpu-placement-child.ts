/**
 * Child process of webgpu-placement_test.ts: runs the policy gradient graph on onnxruntime-web's
 * WebGPU EP with verbose logging (ORT writes node placements to stderr, where the parent reads
 * them) and on onnxruntime-node CPU, and prints the largest output difference as JSON on stdout.
 */
import * as ortNode from "onnxruntime-node";
import * as ortWeb from "onnxruntime-web/webgpu";
import * as onnx from "../../adapters/onnx/mod.ts";
import { policyFeeds, policyGraph } from "./policy-graph.ts";

ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = "verbose";

const bytes = onnx.toOnnxModel(policyGraph());
const feeds = <T>(make: (dtype: string, data: Int32Array | Float32Array, dims: number[]) => T) =>
  Object.fromEntries(
    Object.entries(policyFeeds()).map(([k, v]) => [k, make(v.dtype, v.data, v.dims)]),
  );
const cpu = await (await ortNode.InferenceSession.create(bytes)).run(
  feeds((t, d, s) => new ortNode.Tensor(t as "float32", d as Float32Array, s)),
);
const web = await ortWeb.InferenceSession.create(bytes, {
  executionProviders: ["webgpu"],
  logSeverityLevel: 0,
  logVerbosityLevel: 0,
});
const gpu = await web.run(
  feeds((t, d, s) => new ortWeb.Tensor(t as "float32", d as Float32Array, s)),
);
const maxDiff: Record<string, number> = {};
for (const name of ["loss", "g_emb", "g_w", "g_b"]) {
  const a = cpu[name].data as Float32Array;
  const b = gpu[name].data as Float32Array;
  maxDiff[name] = a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
}
console.log(JSON.stringify({ maxDiff }));
