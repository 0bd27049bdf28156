/**
 * `deno task worker --store postgres://URL [--endpoints URL,...] [--concurrency N]`: a rollout
 * worker (engine/workers/, docs/SCALE-OUT.md). It takes the episodes that trainers with
 * `rollout.dispatch: "workers"` queue in the store's database, plays each (against the inference
 * servers, or with the run's weights), and keeps its turns for the trainer. It prints `worker HOST:PID ready` once it waits
 * for work, a line per episode, and stops on SIGINT or SIGTERM after the episodes it holds.
 */
import { isPostgresUrl } from "../../events/mod.ts";
import { commandExitCode, defineCommand, UsageError } from "../../events/cli/mod.ts";
import { runWorker } from "../workers/mod.ts";

const USAGE = "deno task worker --store postgres://URL [--endpoints URL[,URL...]] " +
  "[--concurrency N]";

const cli = defineCommand({
  name: "worker",
  usage: USAGE,
  summary: "Plays the rollout episodes that trainers queue in a Postgres store (runs with " +
    'rollout.dispatch: "workers"): each is one prompt x sample of a step, played with its ' +
    "run's workflow against OpenAI-compatible servers with the adapter version the trainer " +
    "published (backend openai), or sampled here with the weights the trainer put in the " +
    "store (backend local, on the run's device); the turns go back to the trainer, which logs " +
    "them as a trainer-side rollout would. An episode whose worker dies is played again by " +
    "another (docs/SCALE-OUT.md).",
  options: {
    store: {
      type: "string",
      value: "postgres://URL",
      help: "the runs' store: its database holds the queue (a postgres:// URL; required)",
    },
    endpoints: {
      type: "string",
      multiple: true,
      default: [],
      value: "URL[,URL...]",
      help: "servers to send turns to (repeatable or comma-separated; default: each run's " +
        "rollout.endpoints): the servers the trainer publishes adapters to, as this machine " +
        "reaches them",
    },
    concurrency: {
      type: "string",
      default: "4",
      value: "N",
      help: "episodes played at once, 1..256 (default 4)",
    },
  },
  examples: [
    "deno task worker --store postgres://postgres@10.0.0.2:5432/lab",
    "deno task worker --store postgres://10.0.0.2/lab --endpoints http://127.0.0.1:8000 " +
    "--concurrency 8",
  ],
});

/** `deno task worker ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(USAGE, async () => {
    const { values, positionals } = cli.parse(args);
    if (positionals.length > 0) {
      throw new UsageError(`unexpected argument ${positionals[0]}; name the store with --store`);
    }
    if (values.store === undefined) {
      throw new UsageError("--store is required: the postgres:// URL of the runs' store");
    }
    if (!isPostgresUrl(values.store)) {
      throw new UsageError(
        `--store ${values.store}: workers need a postgres:// URL (the queue lives in the ` +
          "store's database; an SQLite store has no queue)",
      );
    }
    const endpoints = values.endpoints.flatMap((e) => e.split(",")).filter((e) => e !== "");
    for (const e of endpoints) {
      let url: URL | null = null;
      try {
        url = new URL(e);
      } catch { /* reported below */ }
      if (!url || !/^https?:$/.test(url.protocol)) {
        throw new UsageError(`--endpoints ${e}: expected an http:// or https:// URL`);
      }
    }
    const concurrency = values.concurrency;
    if (!/^\d+$/.test(concurrency) || Number(concurrency) < 1 || Number(concurrency) > 256) {
      throw new UsageError(`--concurrency ${concurrency}: expected a whole number from 1 to 256`);
    }
    const controller = new AbortController();
    const stop = () => controller.abort();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    const where = (
      j: { runId: string; phase: string; step: number; prompt: number; sample: number },
    ) => `${j.runId} ${j.phase} step ${j.step} prompt ${j.prompt} sample ${j.sample}`;
    await runWorker({
      storeUrl: values.store,
      endpoints: endpoints.length ? endpoints : undefined,
      concurrency: Number(concurrency),
      signal: controller.signal,
      onReady: () => console.log(`worker ${Deno.hostname()}:${Deno.pid} ready`),
      onPlayed: ({ job, turns, ms, kept }) =>
        console.log(
          `played ${where(job)}: ${turns} turns in ${(ms / 1000).toFixed(1)} s` +
            (kept ? "" : " (already played by another attempt; this copy dropped)"),
        ),
      onFailed: (job, err) => console.error(`failed ${where(job)}: ${err.message}`),
      onMalformed: (err) => console.error(`refused: ${err.message}`),
    });
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
