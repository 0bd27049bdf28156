/**
 * The prepared GPU run's local mode, end to end: `bash tests/device/h200.sh --local OUT` on Mesa's
 * software adapter at the tiny shape, so the script that the GPU machine runs cannot rot. Checks
 * the files it writes and every figure in them. What needs a GPU (bench models, PyTorch bfloat16)
 * is skipped by the script with its reason, and this test checks that reason is there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { softwareVulkanVariable } from "../../adapters/onnx/runtime/mod.ts";
import type { Figure, Ratio } from "./figures.ts";

const SCRIPT = join(import.meta.dirname!, "h200.sh");

async function bash(args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command("bash", {
    args: [SCRIPT, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

interface Stage {
  readonly stage: string;
  readonly status: "ok" | "failed" | "timeout" | "skipped";
  readonly reason?: string;
}

interface FiguresJson {
  readonly adapter: {
    found: boolean;
    isFallbackAdapter?: boolean;
    shaderF16?: boolean;
    limits?: object;
  };
  readonly stages: Stage[];
  readonly figures: (Figure & { gpuUsedPeakMiB: number | null })[];
  readonly ratios: Ratio[];
  readonly bench: Record<string, string[]>;
}

/** The tiny shape's timed figures of one backend and dtype: 2 train batches and generation. */
function assertTinyWorkloads(mine: FiguresJson["figures"], what: string) {
  const sizes = mine.filter((f) => f.tokensPerSecond! > 0).map((f) => `${f.workload} ${f.batch}`);
  assert.deepEqual(sizes.sort(), ["generate 4", "train-step 2", "train-step 4"], what);
  const train4 = mine.find((f) => f.workload === "train-step" && f.batch === 4)!;
  assert.equal(train4.microBatch, 2, "4 sequences ran as 2 micro-batches of 2");
  assert.ok(Number.isFinite(train4.gradNorm) && (train4.gradNorm as number) > 0);
  const gen = mine.find((f) => f.workload === "generate")!;
  assert.equal(gen.generated, 4 * 8, "every row generated its 8 new tokens");
}

/** The profile figures of one backend, by session. */
function profilesOf(result: FiguresJson, backend: string) {
  return new Map(
    result.figures.filter((f) =>
      f.impl === "polyrl" && f.backend === backend && f.workload === "profile"
    ).map((f) => [f.session as string, f]),
  );
}

Deno.test("h200.sh refuses a missing output folder and an unknown option with exit 2", async () => {
  const none = await bash([], { OUT: "" });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /name an output folder/);
  const bad = await bash(["--fast", "/tmp/x"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown option --fast/);
  const stage = await bash(["--stages=0.5b-float32,2b-float32", "/tmp/x"]);
  assert.equal(stage.code, 2);
  assert.match(
    stage.stderr,
    /--stages names 2b-float32; expected some of: native-0\.5b-float32, .*, 0\.5b-float32, /,
  );
});

Deno.test("h200.sh --local: adapter, tiny-shape train and generation in float32 and float16, the profile, the PyTorch peer, bench onnx, figures.json", async () => {
  const out = await Deno.makeTempDir({ prefix: "polyrl-device-test-" });
  try {
    const run = await bash(["--local", out]);
    const log = await Deno.readTextFile(join(out, "log.txt"));
    assert.equal(run.code, 0, `h200.sh --local failed:\n${log}`);
    const result = JSON.parse(await Deno.readTextFile(join(out, "figures.json"))) as FiguresJson;
    const status = new Map(result.stages.map((s) => [s.stage, s]));
    for (const s of result.stages) {
      assert.ok(s.status === "ok" || s.status === "skipped", `${s.stage}: ${s.status}`);
      if (s.status === "skipped") assert.ok((s.reason ?? "").length > 10, `${s.stage} says why`);
    }
    assert.equal(status.get("adapter")?.status, "ok");
    assert.match(status.get("bench models")?.reason ?? "", /software adapter; run on the GPU/);
    assert.match(status.get("bench webgpu")?.reason ?? "", /software adapter; run on the GPU/);

    // The native WebGPU EP's stages, on Mesa 25's lavapipe where CI unpacked it.
    const nativeDtypes = Deno.env.get(softwareVulkanVariable) ? ["float32", "float16"] : [];
    if (nativeDtypes.length === 0) {
      assert.match(status.get("native tiny float32")?.reason ?? "", /POLYRL_SOFTWARE_VULKAN/);
    }
    for (const [dtype, fused] of nativeDtypes.flatMap((d) => [[d, false], [d, true]] as const)) {
      if (fused && dtype !== "float32") continue;
      const mine = result.figures.filter((f) =>
        f.impl === "polyrl" && f.backend === "webgpu" && f.dtype === dtype && !f.profiled &&
        Array.isArray(f.fused) === fused
      );
      assert.ok(mine.every((f) => f.runtime === "onnxruntime-node"), dtype);
      assertTinyWorkloads(mine, `native ${dtype}${fused ? " fused" : ""}`);
    }
    if (nativeDtypes.length > 0) {
      // The float32 stage holds its numbers against the cpu backend's on the same weights.
      const checks = result.figures.filter((f) => f.workload === "cpu-check");
      const logits = checks.find((f) => f.graph === "generate")!;
      assert.equal(logits.rowsCompared, 4 * 8);
      assert.ok((logits.maxAbsDiff as number) < 1e-5 * (logits.maxAbs as number));
      const step = checks.find((f) => f.graph === "train-step")!;
      const near = (a: unknown, b: unknown) =>
        Math.abs((a as number) - (b as number)) < 1e-5 * Math.abs(b as number);
      assert.ok(
        near(step.loss, step.cpuLoss) && near(step.gradNorm, step.cpuGradNorm),
        JSON.stringify(step),
      );
      // The fused stage first holds its decoder's logits against the composed one's.
      const check = result.figures.find((f) => f.workload === "fused-check");
      assert.ok(check, "the fused stage's check");
      assert.equal(check.rowsCompared, 4 * 8);
      assert.ok(
        (check.maxAbsDiff as number) < 1e-5 * (check.maxAbs as number),
        JSON.stringify(check),
      );
      const profiles = profilesOf(result, "webgpu");
      // A train step reads back its scalars once, in the apply run; decode reads nothing.
      assert.equal(profiles.get("train-step accumulate")!.copiesToHost, 0);
      assert.equal(profiles.get("train-step apply")!.copiesToHost, 1);
      assert.equal(profiles.get("decode")!.copiesToHost, 0);
    }

    if (!result.adapter.found) {
      // No Vulkan driver at all: the WebGPU stages say so; nothing else can be checked.
      assert.match(status.get("ours tiny float32")?.reason ?? "", /no WebGPU adapter/);
      return;
    }
    assert.equal(result.adapter.isFallbackAdapter, true, "lavapipe is a fallback adapter");
    assert.ok(result.adapter.limits && "maxBufferSize" in result.adapter.limits);

    const ours = result.figures.filter((f) => f.impl === "polyrl");
    const dtypes = result.adapter.shaderF16 ? ["float32", "float16"] : ["float32"];
    for (const dtype of dtypes) {
      assertTinyWorkloads(
        ours.filter((f) => f.dtype === dtype && f.backend === "webgpu-web" && !f.profiled),
        dtype,
      );
    }
    // The graphs stay small: parameters are inputs, not initializers.
    const graphs = ours.filter((f) => f.workload === "graph");
    assert.deepEqual(graphs.map((g) => g.graph).sort(), [
      "append-decode",
      "decode",
      "prefill",
      "train-step-accumulate",
      "train-step-apply",
      "train-step-fused",
    ]);
    assert.ok(graphs.every((g) => (g.nodes as number) > 100), "node counts written");
    assert.ok(graphs.every((g) => (g.bytes as number) > 1000 && (g.bytes as number) < 2 ** 20));
    assert.ok(
      result.bench["bench onnx"].some((l) => /^webgpu-web: batch 1 x seq 32.*ratio/.test(l)),
    );

    // The profile stage: where a micro-step's and a decode step's time goes, per session.
    const profiles = profilesOf(result, "webgpu-web");
    assert.deepEqual(
      [...profiles.keys()].filter((s) => !s.startsWith("cache")).sort(),
      ["decode", "prefill", "train-step accumulate", "train-step apply"],
    );
    const timestamps = (result.adapter as { features?: string[] }).features?.includes(
      "timestamp-query",
    );
    for (const [session, p] of profiles) {
      assert.ok((p.nodes as number) > 0 && (p.runMs as number) > 0, session);
      assert.ok((p.top as unknown[]).length > 0, `${session} names its costliest ops`);
      if (timestamps) assert.ok((p.gpuPrograms as number) > 0, `${session} has GPU times`);
    }
    // Nothing crosses to the host mid-run but the gradient norm for the finite check (IsNaN and
    // IsInf are CPU kernels in onnxruntime-web): not the PPO clip's bounds, not the decode step.
    assert.equal(profiles.get("train-step accumulate")!.copiesToHost, 0);
    assert.equal(profiles.get("train-step apply")!.copiesToHost, 1);
    assert.equal(profiles.get("decode")!.copiesToHost, 0);

    if (status.get("torch tiny float32")?.status === "ok") {
      const torch = result.figures.filter((f) => f.impl.startsWith("torch-"));
      assert.equal(torch.filter((f) => f.tokensPerSecond! > 0).length, 3);
      // One ratio per (ours dtype or variant, workload size) against the float32 peer; the
      // native float32 with fused ops is one more variant.
      const variants = dtypes.length + nativeDtypes.length + (nativeDtypes.length > 0 ? 1 : 0);
      assert.equal(result.ratios.length, 3 * variants);
      const fusedRatios = result.ratios.filter((r) =>
        r.ours.backend === "webgpu (fused rms_norm+rotary_embedding+attention+grad_norm)"
      );
      assert.equal(fusedRatios.length, nativeDtypes.length > 0 ? 3 : 0, "labelled in the ratios");
      for (const r of result.ratios) {
        assert.ok(Math.abs(r.ratio - r.ours.tokensPerSecond / r.torch.tokensPerSecond) < 1e-12);
      }
    } else {
      assert.match(status.get("torch tiny float32")?.reason ?? "", /no python3 with torch/);
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});
