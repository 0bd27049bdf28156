/**
 * The `cpu` backend: onnxruntime-node's native CPU execution provider. The package is imported
 * when this backend opens, so a process that runs only the web backends (the GPU machine's
 * prepared run, which carries no onnxruntime-node) loads without it.
 */
import type { HostTensor } from "./host-tensor.ts";
import { type OrtModule, ortRuntime, type OrtTensor } from "./ort-runtime.ts";
import { type BackendChoice, type Runtime, RuntimeError } from "./runtime.ts";

/** Options of the cpu backend. */
export interface CpuOptions {
  /** Intra-op threads; fixed so that reductions split the same way on every run. */
  readonly threads?: number;
}

/**
 * Opens the cpu backend. Thread count defaults to the machine's cores (at most 8).
 *
 * @example
 * const runtime = await openCpuRuntime({ threads: 2 });
 */
export async function openCpuRuntime(
  options: CpuOptions = {},
  requested: BackendChoice = "cpu",
  autoReason: string | null = null,
): Promise<Runtime> {
  const threads = options.threads ?? Math.min(8, navigator.hardwareConcurrency || 1);
  const ortNode = await import("onnxruntime-node").catch((error) => {
    throw new RuntimeError(
      `cpu backend needs onnxruntime-node, which did not load (${error}); run ` +
        "`deno install --frozen`, or choose the wasm or webgpu backend",
    );
  });
  const ort = ortNode as unknown as OrtModule;
  return ortRuntime({
    ort,
    info: Object.freeze({
      backend: "cpu",
      requested,
      autoReason,
      onnxruntime: { package: "onnxruntime-node", version: ortNode.env.versions.node ?? "" },
      executionProvider: "cpu",
      threads,
      deterministicCompute: true,
      adapter: null,
      deno: Deno.version.deno,
    }),
    sessionOptions: {
      executionProviders: ["cpu"],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: "sequential",
      // ORT's arena keeps the peak of every distinct shape it has seen (generation varies them
      // each token): a debate run peaked at 8.4 GB with it and 1.7 GB without, results identical.
      enableCpuMemArena: false,
      logSeverityLevel: 3,
      extra: {
        session: {
          use_deterministic_compute: "1",
          // Idle intra-op threads sleep instead of spinning: on a machine whose cores are shared
          // (CI, several jobs at once) spinning workers steal the cores the run needs; next-token
          // decode at 2 threads on a loaded 2-core machine measured 69-86 tok/s spinning and
          // 193-994 without (docs/PERFORMANCE.md). Scheduling only: results are unchanged.
          "intra_op.allow_spinning": "0",
        },
      },
    },
    deviceLocation: "cpu",
    // A copy, so that later writes to the caller's array cannot change device state.
    upload: (tensor: HostTensor): OrtTensor => {
      const copy = new ort.Tensor(tensor.dtype, tensor.data.slice(), [...tensor.dims]);
      // onnxruntime-common wraps float16 bits in a Float16Array where the JS engine has one, and
      // Deno's Node-API reports such an array as empty ("not enough space: expected N, got 0"):
      // hand the native binding the raw Uint16Array bits it reads for float16.
      if (tensor.dtype === "float16") {
        (copy as unknown as { cpuData: Uint16Array }).cpuData = new Uint16Array(
          (copy.data as unknown as ArrayBufferView).buffer,
        );
      }
      return copy;
    },
    close: () => Promise.resolve(),
  });
}
