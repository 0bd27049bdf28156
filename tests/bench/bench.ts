/**
 * `deno task bench [SUITE...]`: runs the named benchmark suites (all when none is named) and
 * prints each suite's ratios, measured within one run so that machine noise cancels.
 */
import type { BackendName } from "../../adapters/onnx/runtime/mod.ts";
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/command.ts";
import { PEER_SCRIPT } from "./torch-peer.ts";

const backends: readonly BackendName[] = ["cpu", "wasm", "webgpu", "webgpu-web"];

/** What the command line passes to every suite. */
export interface BenchOptions {
  /** `--backend`: the one backend the onnx and models suites run on (null: onnx on every backend
   * found, models on cpu). */
  readonly backend: BackendName | null;
  /** Intra-op threads of the models suite's cpu runtime (default: the machine's cores). */
  readonly threads?: number;
  /** The models suite runs this PyTorch peer script after itself and prints the ratios (cpu only). */
  readonly peer?: string;
}

/** A benchmark suite: prints its own report and returns nothing. */
export type BenchSuite = (options: BenchOptions) => Promise<void>;

const suites: Record<string, () => Promise<{ run: BenchSuite }>> = {
  analysis: () => import("../analysis/bench-analysis.ts"),
  events: () => import("./events-bench.ts"),
  grading: () => import("../tasks/grading-bench.ts"),
  models: () => import("../model/bench.ts"),
  onnx: () => import("./onnx-bench.ts"),
  random: () => import("./random-bench.ts"),
  train: () => import("./train-bench.ts"),
  replay: () => import("../replay/replay-bench.ts"),
  serve: () => import("./serve-bench.ts"),
  web: () => import("../web/bench-web.ts"),
  webgpu: () => import("./webgpu-bench.ts"),
  workers: () => import("./workers-bench.ts"),
};

const cli = defineCommand({
  name: "bench",
  usage:
    `deno task bench [--backend cpu|wasm|webgpu|webgpu-web] [--threads N] [--peer FILE] [SUITE...]   (suites: ${
      Object.keys(suites).join(", ") || "none yet"
    })`,
  summary: "Runs benchmark suites and reports ratios measured in one run.",
  options: {
    backend: {
      type: "string",
      value: "cpu|wasm|webgpu|webgpu-web",
      help: "run the onnx and models suites on this backend only (default: onnx on every " +
        "backend found, models on cpu)",
    },
    threads: {
      type: "string",
      value: "N",
      help: "intra-op threads of the models suite's cpu runtime (default: the machine's cores); " +
        "match it to the PyTorch peer's argument",
    },
    peer: {
      type: "boolean",
      help: "the models suite then runs the PyTorch peer (tests/bench/peers/" +
        "torch_decoder_bench.py, on OpenBLAS) at the same threads and prints ours / PyTorch per " +
        "workload (cpu only)",
    },
  },
  examples: [
    "deno task bench events random",
    "deno task bench --backend webgpu onnx models",
    "deno task bench models --threads 1 --peer",
  ],
});

/** `deno task bench ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values, positionals } = cli.parse(args);
    const backend = values.backend ?? null;
    if (backend !== null && !backends.includes(backend as BackendName)) {
      throw new UsageError(`--backend ${backend} is not one of ${backends.join(", ")}`);
    }
    const threads = values.threads === undefined ? undefined : Number(values.threads);
    if (threads !== undefined && (!Number.isSafeInteger(threads) || threads < 1 || threads > 64)) {
      throw new UsageError(`--threads takes a whole number from 1 to 64, got ${values.threads}`);
    }
    // Both are about the cpu runtime: the others run single-threaded host-side, and the peer
    // measures PyTorch on the CPU, so a ratio against a GPU figure would compare nothing.
    if (backend !== null && backend !== "cpu") {
      if (threads !== undefined) {
        throw new UsageError(
          `--threads sets the cpu runtime's threads; --backend ${backend} runs single-threaded ` +
            "host-side: drop --threads or use --backend cpu",
        );
      }
      if (values.peer !== undefined) {
        throw new UsageError(
          `--peer compares against PyTorch on the CPU; with --backend ${backend} there is no cpu ` +
            "figure to compare: drop --peer or use --backend cpu",
        );
      }
    }
    const names = positionals.length > 0 ? positionals : Object.keys(suites);
    if (names.length === 0) throw new Error("no benchmark suite is built yet");
    for (const name of names) {
      const load = suites[name];
      if (!load) {
        throw new UsageError(`unknown suite ${name}; known: ${Object.keys(suites).join(", ")}`);
      }
      console.log(`== bench ${name}`);
      await (await load()).run({
        backend: backend as BackendName | null,
        threads,
        peer: values.peer ? PEER_SCRIPT : undefined,
      });
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
