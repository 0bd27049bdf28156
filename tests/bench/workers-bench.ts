/**
 * `deno task bench workers`: the smoke preset (8 episodes a step: batch_size 4, group_size 2; 3
 * steps; 48 tokens a turn) trained with rollout.dispatch "workers", with 1, 2 and 4 `deno task
 * worker` processes (concurrency 1 each, so the worker count is the number of episodes played at
 * once), and for reference with the trainer playing the episodes itself (dispatch absent); first
 * on the openai backend against two `deno task serve` processes, then on the local backend
 * (workers sampling with their own copy of the weights). All real processes on this machine, the
 * store a fresh schema on POLYRL_TEST_POSTGRES_URL.
 *
 * Figures come from the log's own timestamps (recordedAt), over steps 1 and 2 (step 0 includes
 * each worker reading its run for the first time): a step's rollout wait runs from its
 * `step.started` to its first `turn.generated` (appended once every episode is back and scored),
 * its end is its last `gradient_step.applied`. Episodes/s = episodes / rollout wait; the wait
 * share = rollout wait / step time.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import { startServe } from "../serve/server-process.ts";
import { runCli } from "../support/run-cli.ts";
import {
  type Child,
  POSTGRES_URL,
  postgresStore,
  smokeConfigFile,
  startWorker,
} from "../workers/support.ts";

const STEPS = 3;
const BATCH = 4;
const GROUP = 2;
const WORKERS = [1, 2, 4];

interface Figures {
  readonly episodesPerSecond: number;
  readonly waitShare: number;
  readonly stepSeconds: number;
}

/** The figures of steps 1.. of a run's log. */
function figures(events: readonly StoredEvent<NewEvent>[]): Figures {
  let wait = 0;
  let total = 0;
  let episodes = 0;
  for (let step = 1; step < STEPS; step++) {
    const ofStep = events.filter((e) => "step" in e.data && e.data.step === step);
    const started = ofStep.find((e) => e.type === "step.started")!.recordedAt;
    const rolled = ofStep.find((e) => e.type === "turn.generated")!.recordedAt;
    const updated = ofStep.findLast((e) => e.type === "gradient_step.applied")!.recordedAt;
    wait += rolled - started;
    total += updated - started;
    episodes += ofStep.filter((e) =>
      e.type === "trajectory.completed" && e.data.phase === "rollout"
    ).length;
  }
  return {
    episodesPerSecond: episodes / (wait / 1000),
    waitShare: wait / total,
    stepSeconds: total / 1000 / (STEPS - 1),
  };
}

/** Prints the suite's report. */
export async function run(): Promise<void> {
  if (!POSTGRES_URL) {
    throw new Error(
      "bench workers needs a Postgres server: set POLYRL_TEST_POSTGRES_URL (e.g. " +
        "postgres://postgres@127.0.0.1:5432/postgres); it runs in fresh schemas it drops",
    );
  }
  const root = await mkdtemp(join(tmpdir(), "polyrl-workers-bench-"));
  const adapters = join(root, "adapters");
  await Deno.mkdir(adapters);
  try {
    await using a = await startServe("--model", "embedded", "--lora-dir", adapters);
    await using b = await startServe("--model", "embedded", "--lora-dir", adapters);
    const backends = {
      openai: { backend: "openai", endpoints: [a.url, b.url], adapter_dir: adapters },
      local: { backend: "local" },
    };
    const extra = { steps: STEPS, batch_size: BATCH, group_size: GROUP };
    for (const [backend, rollout] of Object.entries(backends)) {
      const rows: [string, Figures][] = [];
      for (const workers of [0, ...WORKERS]) {
        rows.push(
          await measure(root, backend, workers, {
            rollout: workers === 0 ? rollout : { ...rollout, dispatch: "workers" },
            extra,
          }),
        );
      }
      const one = rows.find(([l]) => l.includes("1 worker"))![1].episodesPerSecond;
      for (const [label, f] of rows) {
        console.log(
          `${label.padEnd(28)} episodes/s vs 1 worker: ${(f.episodesPerSecond / one).toFixed(2)}`,
        );
      }
    }
    console.log(`load average: ${Deno.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** One training run with `workers` worker processes (0: the trainer plays); its figures. */
async function measure(
  root: string,
  backend: string,
  workers: number,
  config: { rollout: Record<string, unknown>; extra: Record<string, unknown> },
): Promise<[string, Figures]> {
  await using store = postgresStore();
  const file = await smokeConfigFile(root, config.rollout, config.extra);
  const running: Child[] = [];
  for (let i = 0; i < workers; i++) {
    running.push(await startWorker(store.url, "--concurrency", "1"));
  }
  try {
    const trained = await runCli(
      "engine/cli/train.ts",
      "--config",
      file,
      "--run-id",
      "bench",
      "--store",
      store.url,
    );
    if (trained.code !== 0) throw new Error(`train failed:\n${trained.stderr}`);
  } finally {
    for (const w of running) await w[Symbol.asyncDispose]();
  }
  await using log = await openStore(store.url, { readOnly: true });
  const events: StoredEvent<NewEvent>[] = [];
  for await (const e of log.readStream("bench")) events.push(e as StoredEvent<NewEvent>);
  const label = workers === 0 ? `${backend}: trainer plays` : `${backend}: ${workers} worker(s)`;
  const f = figures(events);
  console.log(
    `${label.padEnd(28)} ${f.episodesPerSecond.toFixed(2)} episodes/s  wait share ` +
      `${(100 * f.waitShare).toFixed(0)}%  step ${f.stepSeconds.toFixed(1)} s`,
  );
  return [label, f];
}
