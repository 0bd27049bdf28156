/** Choosing and opening a backend by name, including `auto`. */
import { openCpuRuntime } from "./cpu-backend.ts";
import { openNativeWebGpuRuntime } from "./native-webgpu-backend.ts";
import type { BackendChoice, Runtime } from "./runtime.ts";
import { RuntimeError } from "./runtime.ts";
import { openWasmRuntime, openWebGpuRuntime } from "./web-backends.ts";
import { probeWebGpuAdapter } from "./webgpu-adapter.ts";

/** Options for openRuntime. */
export interface OpenRuntimeOptions {
  /** Intra-op threads of the cpu backend (the others are single-threaded host-side). */
  readonly threads?: number;
  /** Record onnxruntime's per-op profile (`Runtime.endProfiling`); every backend but cpu. */
  readonly profile?: boolean;
}

const choices: readonly BackendChoice[] = ["auto", "cpu", "wasm", "webgpu", "webgpu-web"];

/**
 * Opens a runtime. `auto` takes WebGPU when Deno finds a hardware (non-fallback) adapter: the
 * native `webgpu` backend where onnxruntime-node's WebGPU EP opens, `webgpu-web` where it does
 * not; the cpu backend without a hardware adapter. The reason lands in `info.autoReason`.
 *
 * @example
 * ```ts
 * import { openRuntime } from "./open-runtime.ts";
 *
 * const runtime = await openRuntime("auto");
 * console.log(runtime.info.backend, runtime.info.adapter?.description);
 * ```
 */
export async function openRuntime(
  choice: BackendChoice,
  options: OpenRuntimeOptions = {},
): Promise<Runtime> {
  if (options.profile && (choice === "cpu" || choice === "auto")) {
    throw new RuntimeError(
      `profile: true needs a backend other than ${choice} (the cpu backend does not profile)`,
    );
  }
  switch (choice) {
    case "cpu":
      return await openCpuRuntime(options);
    case "wasm":
      return await openWasmRuntime(options);
    case "webgpu":
      return await openNativeWebGpuRuntime(await probeWebGpuAdapter(), "webgpu", null, options);
    case "webgpu-web":
      return await openWebGpuRuntime(await probeWebGpuAdapter(), "webgpu-web", null, options);
    case "auto": {
      const probe = await probeWebGpuAdapter();
      if (probe.kind === "adapter" && !probe.info.isFallbackAdapter) {
        const hardware = `hardware adapter ${probe.info.description}`;
        try {
          return await openNativeWebGpuRuntime(probe, "auto", `${hardware}; native WebGPU EP`);
        } catch (error) {
          const why = error instanceof Error ? error.message : String(error);
          return await openWebGpuRuntime(
            probe,
            "auto",
            `${hardware}; onnxruntime-web, since the native WebGPU EP did not open: ${why}`,
          );
        }
      }
      const reason = probe.kind === "adapter"
        ? `only a fallback (software) adapter: ${probe.info.description}`
        : probe.reason;
      return await openCpuRuntime(options, "auto", `cpu, since WebGPU has ${reason}`);
    }
    default:
      throw new RuntimeError(`backend ${choice} is not one of ${choices.join(", ")}`);
  }
}
