/**
 * `deno task bench webgpu`: onnxruntime-node's native WebGPU EP (`webgpu`) against
 * onnxruntime-web's (`webgpu-web`) on the same adapter, per train step of the tiny policy and of
 * the onnx suite's decoder: session creation, first step (shader compilation), host time per
 * step (fastest of the timed steps), WebGPU kernels (dispatches) and CPU-EP nodes per step, and
 * copies from and to the device per step, from onnxruntime's profiler. Each backend runs in a
 * child process (webgpu-bench-child.ts) started with $POLYRL_SOFTWARE_VULKAN's software Vulkan
 * when it is set (both on the same Mesa 25 lavapipe), with the inherited environment otherwise
 * (a machine with a GPU). Ratios are native / web, measured in this one run.
 *
 * Then generation on the native backend with every runtime.fused_ops op fused (RMSNorm, RoPE, the
 * decode step's GroupQueryAttention) against RMSNorm and RoPE alone, at the device script's tiny
 * shape (tests/device/shapes.ts in a child per run, the two alternated over three rounds).
 */
import { FUSED_OPS } from "../../adapters/model/mod.ts";
import { softwareVulkanEnv } from "../../adapters/onnx/runtime/mod.ts";
import type { WebGpuFigures } from "./webgpu-bench-child.ts";

const child = new URL("./webgpu-bench-child.ts", import.meta.url).pathname;
const shapesTool = new URL("../device/shapes.ts", import.meta.url).pathname;

/** Tokens per second of one generation of 8 x 32 new tokens at the tiny shape, fused as named. */
async function nativeGeneration(fused: readonly string[]): Promise<number | string> {
  const out = await Deno.makeTempFile({ suffix: ".jsonl" });
  try {
    const args = ["--shape", "tiny", "--backend", "webgpu", "--generate", "8x32", "--prompt", "16"];
    const result = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", shapesTool, ...args, "--fused", fused.join(","), "--out", out],
      env: softwareVulkanEnv() ?? {},
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!result.success) {
      return new TextDecoder().decode(result.stderr).trim().split("\n").at(-1) ?? "failed";
    }
    const figures = (await Deno.readTextFile(out)).trim().split("\n").map((l) => JSON.parse(l));
    return figures.find((f) => f.workload === "generate").tokensPerSecond as number;
  } finally {
    await Deno.remove(out);
  }
}

async function measureIn(backend: string, shape: string): Promise<WebGpuFigures | string> {
  const result = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", child, backend, shape],
    env: softwareVulkanEnv() ?? {},
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(result.stdout).trim();
  if (result.success) return JSON.parse(stdout.split("\n").at(-1)!) as WebGpuFigures;
  const stderr = new TextDecoder().decode(result.stderr).trim().split("\n");
  return stderr.find((line) => /Error/.test(line)) ?? stderr.at(-1) ?? "failed";
}

const ms = (x: number) => x < 10 ? x.toFixed(1) : x.toFixed(0);
const kernels = (f: WebGpuFigures) =>
  Object.entries(f.kernels).map(([ep, n]) => `${n} ${ep}`).join(" + ");

/** Runs both backends on both shapes and prints a markdown table and the ratios. */
export async function run(): Promise<void> {
  console.log(
    "| shape | backend | session creation ms | first step ms | step ms (host) | kernels/step | " +
      "to host/step | from host/step |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const shape of ["tiny", "decoder"]) {
    const figures: Record<string, WebGpuFigures> = {};
    for (const backend of ["webgpu", "webgpu-web"]) {
      const f = await measureIn(backend, shape);
      if (typeof f === "string") {
        console.log(`| ${shape} | ${backend} | not run: ${f} |`);
        continue;
      }
      figures[backend] = f;
      console.log(
        `| ${f.shape} | ${backend} (${f.package}) | ${ms(f.createMs)} | ${ms(f.firstStepMs)} | ` +
          `${ms(f.stepMs)} | ${kernels(f)} | ${f.toHost} | ${f.fromHost} |`,
      );
    }
    const [native, web] = [figures["webgpu"], figures["webgpu-web"]];
    if (native && web) {
      console.log(
        `| ${native.shape} | native / web | ${(native.createMs / web.createMs).toFixed(2)}x | ` +
          `${(native.firstStepMs / web.firstStepMs).toFixed(2)}x | ` +
          `${(native.stepMs / web.stepMs).toFixed(2)}x | | | |`,
      );
    }
  }
  const normAndRope = ["rms_norm", "rotary_embedding"];
  const rates: Record<"all" | "normAndRope", number[]> = { all: [], normAndRope: [] };
  for (let round = 0; round < 3; round++) {
    for (const [name, fused] of [["normAndRope", normAndRope], ["all", FUSED_OPS]] as const) {
      const rate = await nativeGeneration(fused);
      if (typeof rate === "string") {
        console.log(`native generation with ${fused.join(", ")} fused: not run: ${rate}`);
        return;
      }
      rates[name].push(rate);
    }
  }
  const rounds = rates.all.map((r, i) => `${(r / rates.normAndRope[i]).toFixed(2)}x`).join(", ");
  console.log(
    `native generation 8 x 32 (tiny shape), ${FUSED_OPS.join(", ")} fused / rms_norm, ` +
      `rotary_embedding: ${rounds} in three rounds (${
        rates.all.map((r) => r.toFixed(0))
      } against ` +
      `${rates.normAndRope.map((r) => r.toFixed(0))} tok/s)`,
  );
}
