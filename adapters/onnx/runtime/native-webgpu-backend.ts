/**
 * The `webgpu` backend: onnxruntime-node's native WebGPU execution provider (Dawn on Vulkan).
 * Nodes are dispatched from C++ and reads wait on Dawn, not on Deno's WebGPU bindings, whose
 * per-dispatch cost and 10 ms per read made the onnxruntime-web path (`webgpu-web`) run the 0.5B
 * LoRA step at 0.053x PyTorch on an H200 (docs/PERFORMANCE.md, issue 32).
 *
 * onnxruntime-node has no way to make a GPU tensor from host data, and reading one with
 * `getData()` aborts the process. Both go through runs instead: an Identity model whose output
 * stays on the GPU uploads, one whose output comes to the host reads. So every read of device
 * state is a session run, and a train step's scalars come back as its cpu-located outputs.
 */
import { Graph } from "../ir.ts";
import { toOnnxModel } from "../onnx-writer.ts";
import { identity } from "../ops/unary.ts";
import type { HostData, HostDType, HostTensor } from "./host-tensor.ts";
import { nodeTensor } from "./node-tensor.ts";
import { type OrtModule, ortRuntime, type OrtTensor } from "./ort-runtime.ts";
import { type BackendChoice, type Runtime, RuntimeError } from "./runtime.ts";
import { softwareVulkanAdvice } from "./software-vulkan.ts";
import type { AdapterProbe } from "./webgpu-adapter.ts";

/** Options of the native WebGPU backend. */
export interface NativeWebGpuOptions {
  /** Sessions write onnxruntime's profile to a file that `Runtime.endProfiling` reads back. */
  readonly profile?: boolean;
}

type OrtNodeSession = Awaited<ReturnType<OrtModule["InferenceSession"]["create"]>>;

/** y = Identity(x) at any shape of one element type and rank, the model of uploads and reads. */
function identityModel(dtype: HostDType, rank: number): Uint8Array {
  const g = new Graph(`copy_${dtype}_${rank}`);
  const x = g.input("x", dtype, Array.from({ length: rank }, (_, i) => `d${i}`));
  g.output(identity(x), "y");
  return toOnnxModel(g);
}

/**
 * Opens the native WebGPU backend. `probe` is Deno's view of the same Vulkan devices (Dawn does
 * not describe its adapter to JavaScript); it is recorded as the adapter when it found one.
 * Throws a RuntimeError naming the fix when onnxruntime-node is missing or Dawn finds no adapter.
 *
 * @example
 * ```ts
 * import { openNativeWebGpuRuntime } from "./native-webgpu-backend.ts";
 * import { probeWebGpuAdapter } from "./webgpu-adapter.ts";
 *
 * const runtime = await openNativeWebGpuRuntime(await probeWebGpuAdapter());
 * ```
 */
export async function openNativeWebGpuRuntime(
  probe: AdapterProbe,
  requested: BackendChoice = "webgpu",
  autoReason: string | null = null,
  options: NativeWebGpuOptions = {},
): Promise<Runtime> {
  const ortNode = await import("onnxruntime-node").catch((error) => {
    throw new RuntimeError(
      `webgpu backend needs onnxruntime-node, which did not load (${error}); run ` +
        "`deno install --frozen`, or choose the webgpu-web backend (onnxruntime-web)",
    );
  });
  const ort = ortNode as unknown as OrtModule;
  const sessionOptions = {
    executionProviders: ["webgpu"],
    executionMode: "sequential",
    // The CPU EP keeps only a few small nodes (shape Concats, the finite check's IsNaN / IsInf):
    // one thread, instead of a pool of every core per session.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    // Its arena would keep the peak of every shape it sees (see cpu-backend.ts).
    enableCpuMemArena: false,
    logSeverityLevel: 3,
    extra: { session: { use_deterministic_compute: "1" } },
  } as const;

  // Copy models per element type, rank and direction, created on first use.
  const copies = new Map<string, Promise<OrtNodeSession>>();
  const copySession = (dtype: HostDType, rank: number, to: "gpu-buffer" | "cpu") => {
    const key = `${dtype}/${rank}/${to}`;
    let session = copies.get(key);
    if (!session) {
      session = ort.InferenceSession.create(identityModel(dtype, rank), {
        ...sessionOptions,
        preferredOutputLocation: to,
      });
      copies.set(key, session);
    }
    return session;
  };
  const copy = async (tensor: OrtTensor, to: "gpu-buffer" | "cpu"): Promise<OrtTensor> => {
    const session = await copySession(tensor.type as HostDType, tensor.dims.length, to);
    return (await session.run({ x: tensor })).y as OrtTensor;
  };

  // Dawn looks for its adapter when the first WebGPU session is created: do that now, so that a
  // machine without one fails here with the fix rather than at the first model.
  try {
    await copySession("float32", 1, "gpu-buffer");
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new RuntimeError(
      /adapter/i.test(message)
        ? `webgpu backend: Dawn (onnxruntime-node's WebGPU EP) found no Vulkan adapter: ` +
          `${softwareVulkanAdvice()}; or choose --device webgpu-web or cpu (${message})`
        : `webgpu backend: onnxruntime-node's WebGPU EP did not start: ${message}`,
      { cause: error },
    );
  }

  return ortRuntime({
    ort,
    profile: options.profile ? "file" : undefined,
    info: Object.freeze({
      backend: "webgpu",
      requested,
      autoReason,
      onnxruntime: { package: "onnxruntime-node", version: ortNode.env.versions.node ?? "" },
      executionProvider: "webgpu",
      threads: 1,
      deterministicCompute: true,
      adapter: probe.kind === "adapter" ? probe.info : null,
      deno: Deno.version.deno,
    }),
    sessionOptions,
    deviceLocation: "gpu-buffer",
    upload: (tensor: HostTensor): Promise<OrtTensor> => {
      if (tensor.dtype === "float64") {
        throw new RuntimeError("WebGPU has no float64; cast to float32 (or use the cpu backend)");
      }
      return copy(nodeTensor(ort, tensor), "gpu-buffer");
    },
    read: async (tensor: OrtTensor): Promise<HostData> => {
      const host = await copy(tensor, "cpu");
      return host.data as HostData;
    },
    close: async () => {
      for (const session of copies.values()) await (await session).release();
      copies.clear();
    },
  });
}
