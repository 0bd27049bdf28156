/**
 * The native webgpu backend (onnxruntime-node's WebGPU EP, Dawn) on Mesa 25's software adapter:
 * train steps agree with the cpu backend, state stays on the GPU, two runs are bit-identical, and
 * greedy generation with the KV cache on the GPU picks the cpu backend's tokens.
 * The native runs happen in child processes started with the software Vulkan of
 * $POLYRL_SOFTWARE_VULKAN (the dynamic loader reads LD_LIBRARY_PATH only at launch); the tests
 * skip, saying so, only when that variable is unset. CI sets it, so there a folder that is
 * configured but does not load fails the tests.
 *
 * Tolerance: the backends sum in different orders and AdamW's m / sqrt(v) amplifies the rounding
 * of small gradients, so each value must satisfy |webgpu - cpu| <= 1e-4 max|cpu tensor| +
 * 1e-3 |cpu| (metrics: 1e-6 + 1e-3 |cpu|). Measured here: 0.64 of it at worst (decoder params).
 */
import assert from "node:assert/strict";
import { softwareVulkanEnv, softwareVulkanVariable } from "../../adapters/onnx/runtime/mod.ts";
import { type GenerationTrace, traceGeneration } from "./native-webgpu-generate.ts";
import { type Trace, traceTrainSteps } from "./native-webgpu-trace.ts";

const env = softwareVulkanEnv();
const skip = env ? null : `${softwareVulkanVariable} is unset: no Mesa 25 software Vulkan ` +
  "folder (.ci/software-vulkan.sh DIR fills one; CI sets it)";
const traceScript = new URL("./native-webgpu-trace.ts", import.meta.url).pathname;
const generateScript = new URL("./native-webgpu-generate.ts", import.meta.url).pathname;

/** Runs a script on webgpu in a child process with `childEnv`; its JSON output or its stderr. */
async function child<T>(
  args: readonly string[],
  childEnv: Record<string, string>,
): Promise<{ trace: T | null; stderr: string }> {
  const out = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const result = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", ...args, out],
      env: childEnv,
      stdout: "inherit",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(result.stderr);
    if (!result.success) return { trace: null, stderr };
    return { trace: JSON.parse(await Deno.readTextFile(out)) as T, stderr };
  } finally {
    await Deno.remove(out);
  }
}

const childTrace = (name: string, childEnv: Record<string, string>) =>
  child<Trace>([traceScript, "webgpu", name], childEnv);

async function nativeTrace(name: string): Promise<Trace> {
  const { trace, stderr } = await childTrace(name, env!);
  assert.ok(trace, `the native webgpu child failed on ${name}:\n${stderr}`);
  return trace;
}

function assertAgrees(gpu: Trace, cpu: Trace) {
  assert.equal(gpu.backend, "webgpu");
  assert.equal(gpu.metrics.length, cpu.metrics.length);
  gpu.metrics.forEach((step, s) =>
    step.forEach((x, i) => {
      const ref = cpu.metrics[s][i];
      assert.ok(
        Math.abs(x - ref) <= 1e-6 + 1e-3 * Math.abs(ref),
        `step ${s} metric ${i}: webgpu ${x} vs cpu ${ref}`,
      );
    })
  );
  assert.deepEqual(Object.keys(gpu.state), Object.keys(cpu.state));
  let worst = 0;
  for (const [name, ref] of Object.entries(cpu.state)) {
    const got = gpu.state[name];
    assert.equal(got.length, ref.length, name);
    const scale = ref.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    ref.forEach((x, i) => {
      const tolerance = 1e-4 * scale + 1e-3 * Math.abs(x);
      worst = Math.max(worst, Math.abs(got[i] - x) / (tolerance || 1));
      assert.ok(Math.abs(got[i] - x) <= tolerance, `${name}[${i}]: webgpu ${got[i]} vs cpu ${x}`);
    });
    // Parameters, moments, step and accumulators live on the GPU between runs.
    assert.equal(gpu.locations[name], "gpu-buffer", `${name} is not on the GPU`);
  }
  console.log(`worst state difference: ${(worst * 100).toFixed(1)}% of the tolerance`);
}

const opts = { ignore: skip !== null, sanitizeResources: false, sanitizeOps: false };
const label = (base: string) => skip ? `${base} (skipped: ${skip})` : base;

for (const name of ["tiny", "tiny-micro", "decoder"]) {
  Deno.test({
    ...opts,
    name: label(`native webgpu ${name}: train steps agree with cpu, state on the GPU`),
    fn: async () => assertAgrees(await nativeTrace(name), await traceTrainSteps("cpu", name)),
  });
}

for (const name of ["tiny-micro", "decoder"]) {
  Deno.test({
    ...opts,
    name: label(`native webgpu ${name}: two runs are bit-identical`),
    fn: async () => {
      const [a, b] = [await nativeTrace(name), await nativeTrace(name)];
      assert.deepEqual(b.metrics, a.metrics);
      for (const key of Object.keys(a.state)) assert.deepEqual(b.state[key], a.state[key], key);
    },
  });
}

Deno.test({
  ...opts,
  name: label("native webgpu: greedy generation with the KV cache on the GPU agrees with cpu"),
  fn: async () => {
    const { trace, stderr } = await child<GenerationTrace>([generateScript, "webgpu"], env!);
    assert.ok(trace, `the native webgpu generation child failed:\n${stderr}`);
    const cpu = await traceGeneration("cpu");
    assert.deepEqual(trace.tokens, cpu.tokens);
    assert.equal(trace.logits.length, cpu.logits.length);
    trace.logits.forEach((row, i) =>
      row.forEach((x, j) =>
        assert.ok(Math.abs(x - cpu.logits[i][j]) < 1e-4, `step ${i} logit ${j}: ${x} vs cpu`)
      )
    );
  },
});

Deno.test({
  sanitizeResources: false,
  sanitizeOps: false,
  name: "native webgpu without a Vulkan adapter fails naming the variables and the fix",
  fn: async () => {
    const { trace, stderr } = await childTrace("tiny", {
      VK_ICD_FILENAMES: "/nonexistent/polyrl_icd.json",
      VK_DRIVER_FILES: "/nonexistent/polyrl_icd.json",
    });
    assert.equal(trace, null);
    assert.match(stderr, /found no Vulkan adapter/);
    assert.match(stderr, /VK_ICD_FILENAMES=.*LD_LIBRARY_PATH=/);
    assert.match(stderr, /software-vulkan\.sh/);
    assert.match(stderr, /webgpu-web or cpu/);
  },
});
