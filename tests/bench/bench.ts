/**
 * `deno task bench [SUITE...]`: runs the named benchmark suites (all when none is named) and
 * prints each suite's ratios, measured within one run so that machine noise cancels.
 */
import { defineCommand, runCommand, UsageError } from "../../events/cli/command.ts";

/** A benchmark suite: prints its own report and returns nothing. */
export type BenchSuite = () => Promise<void>;

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
  usage: `deno task bench [SUITE...]   (suites: ${Object.keys(suites).join(", ") || "none yet"})`,
  summary: "Runs benchmark suites and reports ratios measured in one run.",
  options: {},
  examples: ["deno task bench events random"],
});

await runCommand(cli.usage, async () => {
  const { positionals } = cli.parse(Deno.args);
  const names = positionals.length > 0 ? positionals : Object.keys(suites);
  if (names.length === 0) throw new Error("no benchmark suite is built yet");
  for (const name of names) {
    const load = suites[name];
    if (!load) {
      throw new UsageError(`unknown suite ${name}; known: ${Object.keys(suites).join(", ")}`);
    }
    console.log(`== bench ${name}`);
    await (await load()).run();
  }
});
