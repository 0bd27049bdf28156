/**
 * `deno task bench [SUITE...]`: runs the named benchmark suites (all when none is named) and
 * prints each suite's ratios, measured within one run so that machine noise cancels.
 */
import { defineCommand, runCommand, UsageError } from "../../events/cli/command.ts";

/** What the command line passes to every suite. */
export interface BenchOptions {
  /** Intra-op threads of the suites that open a cpu runtime (default: the machine's cores). */
  readonly threads?: number;
  /** The models suite runs this PyTorch peer script after itself and prints the ratios. */
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
  web: () => import("../web/bench-web.ts"),
};

const cli = defineCommand({
  name: "bench",
  usage: `deno task bench [SUITE...] [--threads N] [--peer FILE]   (suites: ${
    Object.keys(suites).join(", ") || "none yet"
  })`,
  summary: "Runs benchmark suites and reports ratios measured in one run.",
  options: {
    threads: {
      type: "string",
      value: "N",
      help: "intra-op threads of the models suite's cpu runtime (default: the machine's cores); " +
        "match it to the PyTorch peer's argument",
    },
    peer: {
      type: "string",
      value: "FILE",
      path: true,
      help: "the PyTorch peer (shared/peers/torch_decoder_bench.py): the models suite runs it " +
        "right after itself at the same threads and prints ours / PyTorch per workload",
    },
  },
  examples: [
    "deno task bench events random",
    "deno task bench models --threads 1 --peer ../shared/peers/torch_decoder_bench.py",
  ],
});

await runCommand(cli.usage, async () => {
  const { positionals, values } = cli.parse(Deno.args);
  const threads = values.threads === undefined ? undefined : Number(values.threads);
  if (threads !== undefined && (!Number.isSafeInteger(threads) || threads < 1 || threads > 64)) {
    throw new UsageError(`--threads takes a whole number from 1 to 64, got ${values.threads}`);
  }
  const names = positionals.length > 0 ? positionals : Object.keys(suites);
  if (names.length === 0) throw new Error("no benchmark suite is built yet");
  for (const name of names) {
    const load = suites[name];
    if (!load) {
      throw new UsageError(`unknown suite ${name}; known: ${Object.keys(suites).join(", ")}`);
    }
    console.log(`== bench ${name}`);
    await (await load()).run({ threads, peer: values.peer });
  }
});
