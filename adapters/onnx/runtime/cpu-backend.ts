/**
 * The `cpu` backend: onnxruntime-node's native CPU execution provider. The package is imported
 * when this backend opens, so a process that runs only the web backends (the GPU machine's
 * prepared run, which carries no onnxruntime-node) loads without it.
 */
import type { HostTensor } from "./host-tensor.ts";
import { keepFreedTensorMemory } from "./glibc-malloc.ts";
import { nodeTensor } from "./node-tensor.ts";
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
 * ```ts
 * import { openCpuRuntime } from "./cpu-backend.ts";
 *
 * const runtime = await openCpuRuntime({ threads: 2 });
 * ```
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
  // Its arena is off (below): each run's freed tensors are kept for the next instead.
  keepFreedTensorMemory();
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
    // A session run at one shape (a supervised train step) plans its intermediates into one block
    // per run (110 MB at the embedded model's 8 x 128): freed to malloc, the block's hole is split
    // by what runs between steps, and the heap grows, faulting it in anew, at steps that vary
    // with the garbage collector (docs/PERFORMANCE.md, "The cpu train step and its page faults").
    fixedShapeSessionOptions: { enableCpuMemArena: true },
    deviceLocation: "cpu",
    upload: (tensor: HostTensor): OrtTensor => nodeTensor(ort, tensor),
    close: () => Promise.resolve(),
  });
}
