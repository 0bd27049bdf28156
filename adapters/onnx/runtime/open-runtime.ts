/** Choosing and opening a backend by name, including `auto`. */
import { openCpuRuntime } from "./cpu-backend.ts";
import type { BackendChoice, Runtime } from "./runtime.ts";
import { RuntimeError } from "./runtime.ts";
import { openWasmRuntime, openWebGpuRuntime } from "./web-backends.ts";
import { probeWebGpuAdapter } from "./webgpu-adapter.ts";

/** Options for openRuntime. */
export interface OpenRuntimeOptions {
  /** Intra-op threads of the cpu backend (wasm and webgpu are single-threaded host-side). */
  readonly threads?: number;
  /**
   * Record onnxruntime's per-op profile (`Runtime.endProfiling`); wasm and webgpu only, since
   * onnxruntime-node writes its profile to a file of its own naming.
   */
  readonly profile?: boolean;
}

const choices: readonly BackendChoice[] = ["auto", "cpu", "wasm", "webgpu"];

/**
 * Opens a runtime. `auto` takes WebGPU when Deno finds a hardware (non-fallback) adapter and the
 * cpu backend otherwise; the reason lands in `info.autoReason`.
 *
 * @example
 * const runtime = await openRuntime("auto");
 * console.log(runtime.info.backend, runtime.info.adapter?.description);
 */
export async function openRuntime(
  choice: BackendChoice,
  options: OpenRuntimeOptions = {},
): Promise<Runtime> {
  if (options.profile && (choice === "cpu" || choice === "auto")) {
    throw new RuntimeError(
      `profile: true needs the wasm or webgpu backend, not ${choice} (onnxruntime-node writes ` +
        "its profile to a file of its own naming)",
    );
  }
  switch (choice) {
    case "cpu":
      return await openCpuRuntime(options);
    case "wasm":
      return await openWasmRuntime(options);
    case "webgpu":
      return await openWebGpuRuntime(await probeWebGpuAdapter(), "webgpu", null, options);
    case "auto": {
      const probe = await probeWebGpuAdapter();
      if (probe.kind === "adapter" && !probe.info.isFallbackAdapter) {
        return await openWebGpuRuntime(probe, "auto", `hardware adapter ${probe.info.description}`);
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
