/**
 * `deno task bench webgpu`: onnxruntime-node's native WebGPU EP (`webgpu`) against
 * onnxruntime-web's (`webgpu-web`) on the same adapter, per train step of the tiny policy and of
 * the onnx suite's decoder: session creation, first step (shader compilation), host time per
 * step (fastest of the timed steps), WebGPU kernels (dispatches) and CPU-EP nodes per step, and
 * copies from and to the device per step, from onnxruntime's profiler. Each backend runs in a
 * child process (webgpu-bench-child.ts) started with $POLYRL_SOFTWARE_VULKAN's software Vulkan
 * when it is set (both on the same Mesa 25 lavapipe), with the inherited environment otherwise
 * (a machine with a GPU). Ratios are native / web, measured in this one run.
 */
import { softwareVulkanEnv } from "../../adapters/onnx/runtime/mod.ts";
import type { WebGpuFigures } from "./webgpu-bench-child.ts";

const child = new URL("./webgpu-bench-child.ts", import.meta.url).pathname;

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
}
