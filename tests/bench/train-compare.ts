/**
 * `deno task bench-compare --before COMMIT`: end-to-end training throughput and peak memory of
 * this checkout against an earlier commit, measured in one invocation. The earlier commit is
 * checked out beside this one (a detached git worktree in a temporary folder, its own
 * `deno install --frozen`), then each round runs `deno task train` once in each checkout, the
 * order alternating between rounds (A B, B A, ...) so that the load of a shared machine falls on
 * both alike. Every run is timed from outside (wall time, including start-up) and measured by
 * `/usr/bin/time -v` (CPU time, peak RSS). Prints each run, then the medians and the ratios
 * current / before.
 */
import { join } from "node:path";
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/command.ts";

/** One timed training run. */
export interface TrainRun {
  readonly side: "before" | "current";
  readonly round: number;
  readonly seconds: number;
  /** User + system CPU seconds: a run is single-threaded, so this moves little with load. */
  readonly cpuSeconds: number;
  /** Peak resident set size in MiB, as `/usr/bin/time -v` reports it. */
  readonly peakRssMiB: number;
}

const cli = defineCommand({
  name: "bench-compare",
  usage:
    "deno task bench-compare --before COMMIT [--preset NAME] [--steps N] [--rounds N] [--seed N]",
  summary:
    "Times `deno task train` in this checkout and at an earlier commit (a worktree beside it), " +
    "interleaved, and prints wall time, steps/s and peak RSS with their ratios.",
  options: {
    before: { type: "string", value: "COMMIT", help: "the commit to compare against" },
    preset: {
      type: "string",
      value: "NAME",
      default: "refine-drmas",
      help: "training preset (default refine-drmas, the default run)",
    },
    steps: { type: "string", value: "N", default: "3", help: "steps per run (default 3)" },
    rounds: {
      type: "string",
      value: "N",
      default: "2",
      help: "runs per side, alternating order (default 2)",
    },
    seed: { type: "string", value: "N", default: "1", help: "seed of every run (default 1)" },
  },
  examples: [
    "deno task bench-compare --before 027365e",
    "deno task bench-compare --before 027365e --preset debate-mada --steps 2 --rounds 1",
  ],
});

function positiveInt(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new UsageError(`--${name} takes a whole number >= 1, got ${text}`);
  }
  return n;
}

async function run(cmd: string, args: string[], cwd: string) {
  const out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function git(args: string[]): Promise<string> {
  const r = await run("git", args, Deno.cwd());
  if (r.code !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

/** The full id of `commit`, or a usage error naming it. */
async function resolveCommit(commit: string): Promise<string> {
  return await git(["rev-parse", "--verify", `${commit}^{commit}`]).catch(() => {
    throw new UsageError(`--before ${commit} is not a commit of this repository`);
  });
}

/** Checks out commit `full` in a new worktree `dir` with its npm packages installed. */
async function checkoutBefore(full: string, dir: string): Promise<void> {
  await git(["worktree", "add", "--detach", dir, full]);
  const install = await run("deno", ["install", "--frozen"], dir);
  if (install.code !== 0) {
    throw new Error(`deno install --frozen at ${full} failed: ${install.stderr.trim()}`);
  }
}

/** A number from `/usr/bin/time -v` output, by its label. */
function timeField(timeOutput: string, label: string): number {
  const m = new RegExp(`${label.replace(/[()]/g, "\\$&")}: ([\\d.]+)`).exec(timeOutput);
  if (!m) throw new Error(`no "${label}" in /usr/bin/time output:\n${timeOutput.slice(-2000)}`);
  return Number(m[1]);
}

async function timedTrain(
  checkout: string,
  store: string,
  opts: { preset: string; steps: number; seed: number },
): Promise<Omit<TrainRun, "side" | "round">> {
  const t0 = performance.now();
  const r = await run("/usr/bin/time", [
    "-v",
    "deno",
    "run",
    "-A",
    "engine/cli/train.ts",
    "--preset",
    opts.preset,
    "--steps",
    String(opts.steps),
    "--seed",
    String(opts.seed),
    "--device",
    "cpu",
    "--store",
    store,
  ], checkout);
  const seconds = (performance.now() - t0) / 1000;
  if (r.code !== 0) {
    throw new Error(`training in ${checkout} failed (exit ${r.code}):\n${r.stderr.slice(-3000)}`);
  }
  return {
    seconds,
    cpuSeconds: timeField(r.stderr, "User time (seconds)") +
      timeField(r.stderr, "System time (seconds)"),
    peakRssMiB: timeField(r.stderr, "Maximum resident set size (kbytes)") / 1024,
  };
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Runs the comparison and returns every run (also printed as it goes). */
export async function compareTraining(opts: {
  before: string;
  preset: string;
  steps: number;
  rounds: number;
  seed: number;
}): Promise<TrainRun[]> {
  const full = await resolveCommit(opts.before);
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bench-compare-" });
  const beforeDir = join(tmp, "before");
  const runs: TrainRun[] = [];
  try {
    await checkoutBefore(full, beforeDir);
    const current = await git(["rev-parse", "HEAD"]);
    const dirty = (await git(["status", "--porcelain", "--untracked-files=no"])) !== "";
    console.log(
      `before ${full.slice(0, 12)} (${beforeDir}), current ${current.slice(0, 12)}` +
        `${dirty ? " plus uncommitted changes" : ""}; preset ${opts.preset}, ${opts.steps} ` +
        `steps, seed ${opts.seed}, cpu; ${opts.rounds} rounds, order alternating`,
    );
    const sides = { before: beforeDir, current: Deno.cwd() } as const;
    for (let round = 0; round < opts.rounds; round++) {
      const order = round % 2 === 0
        ? (["before", "current"] as const)
        : (["current", "before"] as const);
      for (const side of order) {
        const store = join(tmp, `${side}-${round}.sqlite`);
        const r = await timedTrain(sides[side], store, opts);
        runs.push({ side, round, ...r });
        console.log(
          `round ${round + 1} ${side.padEnd(7)} ${r.seconds.toFixed(1)} s, ` +
            `${(opts.steps / r.seconds).toFixed(4)} steps/s, CPU ${r.cpuSeconds.toFixed(1)} s, ` +
            `peak RSS ${r.peakRssMiB.toFixed(0)} MiB`,
        );
      }
    }
    const medians = (f: (r: TrainRun) => number) => {
      const of = (side: TrainRun["side"]) => median(runs.filter((r) => r.side === side).map(f));
      return { before: of("before"), current: of("current") };
    };
    const wall = medians((r) => r.seconds);
    const cpu = medians((r) => r.cpuSeconds);
    const rss = medians((r) => r.peakRssMiB);
    const line = (what: string, m: { before: number; current: number }, unit: string) =>
      console.log(
        `median ${what}: before ${m.before.toFixed(1)} ${unit}, current ` +
          `${m.current.toFixed(1)} ${unit}; current/before ${(m.current / m.before).toFixed(2)}x`,
      );
    line("wall time", wall, "s");
    console.log(
      `steps/s: before ${(opts.steps / wall.before).toFixed(4)}, current ` +
        `${(opts.steps / wall.current).toFixed(4)}; current/before ` +
        `${(wall.before / wall.current).toFixed(2)}x (target: wall time <= 0.5x, steps/s >= 2x)`,
    );
    line("CPU time (user + sys)", cpu, "s");
    line("peak RSS", rss, "MiB");
  } finally {
    if (await exists(beforeDir)) {
      await git(["worktree", "remove", "--force", beforeDir]).catch((e) =>
        console.error(`could not remove the worktree ${beforeDir}: ${e.message}`)
      );
    }
    await Deno.remove(tmp, { recursive: true }).catch(() => undefined);
  }
  return runs;
}

/** `deno task bench-compare ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values } = cli.parse(args);
    if (!values.before) throw new UsageError("--before COMMIT is required");
    await compareTraining({
      before: values.before,
      preset: values.preset!,
      steps: positiveInt("steps", values.steps!),
      rounds: positiveInt("rounds", values.rounds!),
      seed: Number(values.seed),
    });
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
