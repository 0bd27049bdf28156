/**
 * The `wasm` and `webgpu-web` backends: onnxruntime-web loaded through its webgpu bundle (the bare
 * specifier resolves to the Node build, which has no WebGPU). WASM runs single-threaded because
 * the threaded build spawns blob-URL workers that Deno refuses.
 */
import * as ortWeb from "onnxruntime-web/webgpu";
import { bytesPerElement, readGpuBuffers, typedArray, writeGpuBuffer } from "./gpu-buffer.ts";
import { elementCount, type HostDType, type HostTensor } from "./host-tensor.ts";
import { type OrtModule, ortRuntime, type OrtTensor } from "./ort-runtime.ts";
import { type BackendChoice, type Runtime, RuntimeError } from "./runtime.ts";
import type { AdapterProbe } from "./webgpu-adapter.ts";

const ort = ortWeb as unknown as OrtModule;

// ORT-web initializes its WASM module once per process with these settings.
ortWeb.env.wasm.numThreads = 1;
ortWeb.env.wasm.proxy = false;
ortWeb.env.logLevel = "error";

function version(): string {
  return ortWeb.env.versions.web ?? "";
}

/** Options of the web backends. */
export interface WebRuntimeOptions {
  /**
   * Record onnxruntime's profile of every session (`Runtime.endProfiling`); on webgpu the device
   * then gets `timestamp-query` where the adapter has it, for GPU times per program.
   */
  readonly profile?: boolean;
}

/**
 * Opens the single-threaded WASM backend.
 *
 * @example
 * ```ts
 * import { openWasmRuntime } from "./web-backends.ts";
 *
 * const runtime = await openWasmRuntime();
 * ```
 */
export function openWasmRuntime(options: WebRuntimeOptions = {}): Promise<Runtime> {
  return Promise.resolve(ortRuntime({
    ort,
    profile: options.profile ? "printed" : undefined,
    info: Object.freeze({
      backend: "wasm",
      requested: "wasm",
      autoReason: null,
      onnxruntime: { package: "onnxruntime-web", version: version() },
      executionProvider: "wasm",
      threads: 1,
      deterministicCompute: true,
      adapter: null,
      deno: Deno.version.deno,
    }),
    sessionOptions: {
      executionProviders: ["wasm"],
      executionMode: "sequential",
      logSeverityLevel: 3,
      extra: { session: { use_deterministic_compute: "1" } },
    },
    deviceLocation: "cpu",
    // A copy, so that later writes to the caller's array cannot change device state.
    upload: (tensor: HostTensor): OrtTensor =>
      new ort.Tensor(tensor.dtype, tensor.data.slice(), [...tensor.dims]),
    close: () => Promise.resolve(),
  }));
}

// Limits ORT's kernels may need; the device gets the adapter's maximum for each.
const wantedLimits = [
  "maxBufferSize",
  "maxStorageBufferBindingSize",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxComputeWorkgroupsPerDimension",
  "maxStorageBuffersPerShaderStage",
] as const;

/**
 * Opens onnxruntime-web's WebGPU backend on a probed adapter: every node is dispatched from
 * JavaScript through Deno's WebGPU bindings (the path a browser takes; the native `webgpu`
 * backend is the fast one where onnxruntime-node runs). The runtime creates and owns the GPUDevice and
 * hands it to ORT, so that uploaded tensors and session outputs share one device.
 *
 * @example
 * ```ts
 * import { openWebGpuRuntime } from "./web-backends.ts";
 * import { probeWebGpuAdapter } from "./webgpu-adapter.ts";
 *
 * const probe = await probeWebGpuAdapter();
 * if (probe.kind === "adapter") await openWebGpuRuntime(probe);
 * ```
 */
export async function openWebGpuRuntime(
  probe: AdapterProbe,
  requested: BackendChoice = "webgpu-web",
  autoReason: string | null = null,
  options: WebRuntimeOptions = {},
): Promise<Runtime> {
  if (probe.kind === "no-adapter") {
    throw new RuntimeError(`webgpu-web backend needs a WebGPU adapter: ${probe.reason}`);
  }
  const { adapter, info } = probe;
  const requiredLimits: Record<string, number> = {};
  for (const key of wantedLimits) requiredLimits[key] = adapter.limits[key];
  const wantedFeatures = ["shader-f16", ...(options.profile ? ["timestamp-query"] : [])];
  const requiredFeatures = (wantedFeatures as GPUFeatureName[]).filter((f) =>
    adapter.features.has(f)
  );
  const device = await adapter.requestDevice({ requiredLimits, requiredFeatures });
  return ortRuntime({
    ort,
    profile: options.profile ? "printed" : undefined,
    info: Object.freeze({
      backend: "webgpu-web",
      requested,
      autoReason,
      onnxruntime: { package: "onnxruntime-web", version: version() },
      executionProvider: "webgpu",
      threads: 1,
      deterministicCompute: true,
      adapter: info,
      deno: Deno.version.deno,
    }),
    sessionOptions: {
      executionProviders: [{ name: "webgpu", device } as unknown as "webgpu"],
      executionMode: "sequential",
      logSeverityLevel: 3,
      extra: { session: { use_deterministic_compute: "1" } },
    },
    deviceLocation: "gpu-buffer",
    upload: (tensor: HostTensor): OrtTensor => {
      if (tensor.dtype === "float64") {
        throw new RuntimeError("WebGPU has no float64; cast to float32 (or use the cpu backend)");
      }
      const buffer = writeGpuBuffer(device, tensor);
      const byteLength = tensor.data.byteLength;
      return ort.Tensor.fromGpuBuffer(
        buffer,
        {
          dataType: tensor.dtype,
          dims: [...tensor.dims],
          download: async () => {
            const [bytes] = await readGpuBuffers(device, [{ buffer, byteLength }]);
            return typedArray(tensor.dtype, bytes);
          },
          dispose: () => buffer.destroy(),
        } as Parameters<typeof ort.Tensor.fromGpuBuffer>[1],
      ) as OrtTensor;
    },
    // Every output a run returns to the host comes in one read (one 11 ms map, see
    // readGpuBuffers) instead of onnxruntime's one read per output.
    download: async (tensors: readonly OrtTensor[]) => {
      const bytes = await readGpuBuffers(
        device,
        tensors.map((t) => ({
          buffer: t.gpuBuffer as GPUBuffer,
          byteLength: elementCount(t.dims) * bytesPerElement(t.type as HostDType),
        })),
      );
      return bytes.map((b, i) => typedArray(tensors[i].type as HostDType, b));
    },
    close: () => {
      device.destroy();
      return Promise.resolve();
    },
  });
}
