/**
 * `deno task bench [SUITE...]`: runs the named benchmark suites (all when none is named) and
 * prints each suite's ratios, measured within one run so that machine noise cancels.
 */
import type { BackendName } from "../../adapters/onnx/runtime/mod.ts";
import { defineCommand, runCommand, UsageError } from "../../events/cli/command.ts";

const backends: readonly BackendName[] = ["cpu", "wasm", "webgpu"];

/** What `--backend` asked for: the one backend the onnx and models suites run on (all when null). */
export interface BenchOptions {
  readonly backend: BackendName | null;
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
};

const cli = defineCommand({
  name: "bench",
  usage: `deno task bench [--backend cpu|wasm|webgpu] [SUITE...]   (suites: ${
    Object.keys(suites).join(", ") || "none yet"
  })`,
  summary: "Runs benchmark suites and reports ratios measured in one run.",
  options: {
    backend: {
      type: "string",
      value: "cpu|wasm|webgpu",
      help: "run the onnx and models suites on this backend only (default: onnx on every " +
        "backend found, models on cpu)",
    },
  },
  examples: ["deno task bench events random", "deno task bench --backend webgpu onnx models"],
});

await runCommand(cli.usage, async () => {
  const { values, positionals } = cli.parse(Deno.args);
  const backend = values.backend ?? null;
  if (backend !== null && !backends.includes(backend as BackendName)) {
    throw new UsageError(`--backend ${backend} is not one of ${backends.join(", ")}`);
  }
  const names = positionals.length > 0 ? positionals : Object.keys(suites);
  if (names.length === 0) throw new Error("no benchmark suite is built yet");
  for (const name of names) {
    const load = suites[name];
    if (!load) {
      throw new UsageError(`unknown suite ${name}; known: ${Object.keys(suites).join(", ")}`);
    }
    console.log(`== bench ${name}`);
    await (await load()).run({ backend: backend as BackendName | null });
  }
});
