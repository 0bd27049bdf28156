/**
 * Ctrl-C on `deno task train`, through the real CLI: the first one lets the current step finish
 * (in the last step: stops before the final evaluation), records the run as `interrupted`, exits
 * 130 and says where it stopped (steps counted as on the progress line) and the exact command
 * that continues it; that resume finishes the run, which replays identically. A second Ctrl-C
 * quits at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";

const TRAIN = "engine/cli/train.ts";
const ROOT = new URL("../..", import.meta.url).pathname;

/** What a training process printed on stderr and how it ended. */
interface Stopped {
  readonly code: number;
  readonly stderr: string;
}

/**
 * Runs train.ts with `args` and sends it SIGINT once its stderr matches `after`; with `again`,
 * a second SIGINT once it says it is stopping.
 */
async function interruptTrain(args: string[], after: RegExp, again = false): Promise<Stopped> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", TRAIN, ...args],
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  let stderr = "";
  let signals = 0;
  for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
    stderr += chunk;
    if (signals === 0 && after.test(stderr)) {
      child.kill("SIGINT");
      signals++;
    } else if (again && signals === 1 && stderr.includes("Ctrl-C again")) {
      child.kill("SIGINT");
      signals++;
    }
  }
  const { code } = await child.status;
  assert.ok(signals > 0, `the run ended before ${after}: ${stderr}`);
  return { code, stderr };
}

/** `runs --format json` with `args`, after checking it exited 0. */
async function runs(store: string, ...args: string[]): Promise<Record<string, unknown>[]> {
  const r = await runCli("analysis/cli/runs.ts", "--store", store, "--format", "json", ...args);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** The run's event types, with the step of those that have one. */
async function loggedEvents(store: string, runId: string): Promise<string[]> {
  await using s = await openStore(store, { readOnly: true });
  const out: string[] = [];
  for await (const e of s.readStream(runId)) {
    const step = (e.data as { step?: unknown }).step;
    out.push(typeof step === "number" ? `${e.type}@${step}` : e.type);
  }
  return out;
}

Deno.test({
  name: "Ctrl-C in the last step stops before the final evaluation; the resume evaluates",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-interrupt-" });
    const store = join(dir, "events.sqlite");
    // Four prompts a step: the last step's rollout and update outlast the signal's way here.
    const config = join(dir, "config.json");
    await Deno.writeTextFile(config, JSON.stringify({ extends: "smoke", batch_size: 4 }));
    const runId = "last-step";
    const args = ["--config", config, "--steps", "2", "--device", "cpu", "--run-id", runId];
    const stopped = await interruptTrain([...args, "--store", store], /train 1\/2 \[step 0 done\]/);
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.ok(
      stopped.stderr.includes(
        `run ${runId} stopped after step 0 (1 of 2 steps done); a resume continues at step 1: ` +
          `deno task train --resume ${runId} --store ${store}\n`,
      ),
      stopped.stderr,
    );
    assert.doesNotMatch(stopped.stderr, /^error:|train 2\/2/m);
    const logged = await loggedEvents(store, runId);
    assert.ok(!logged.some((e) => e.startsWith("evaluation.completed")), logged.join(" "));
    assert.ok(!logged.includes("run.completed"));
    assert.equal(logged.at(-1), "run.failed@1");

    const interrupted = await runs(store, "--status", "interrupted");
    assert.deepEqual(interrupted.map((r) => [r.run_id, r.status]), [[runId, "interrupted"]]);
    assert.deepEqual(await runs(store, "--status", "failed"), []);

    const resumed = await runCli(TRAIN, "--resume", runId, "--store", store);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.ok((await loggedEvents(store, runId)).includes("evaluation.completed@1"));
    const [row] = await runs(store);
    assert.deepEqual([row.status, row.attempts], ["completed", 2]);
    const replay = await runCli("engine/cli/replay.ts", runId, "--store", store);
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name: "Ctrl-C mid-run stops after the current step, exit 130; a second Ctrl-C quits at once",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-interrupt-" });
    const store = join(dir, "events.sqlite");
    const runId = "mid-run";
    const stopped = await interruptTrain(
      ["--preset", "smoke", "--steps", "4", "--device", "cpu", "--run-id", runId]
        .concat(["--store", store]),
      /train 1\/4 \[step 0 done\]/,
    );
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.doesNotMatch(stopped.stderr, /^error:/m);
    // The step under way when the signal came finished; the message counts as the progress did.
    // Steps by their number in the log (from 0), finished steps as the progress line counts.
    const message = stopped.stderr.match(
      /^run (\S+) stopped after step (\d) \((\d) of 4 steps done\); a resume continues at step (\d): /m,
    );
    assert.ok(message, stopped.stderr);
    const [, named, step, done, next] = message;
    assert.deepEqual([named, Number(step) + 1, Number(next)], [runId, Number(done), Number(done)]);
    const lastProgress = [...stopped.stderr.matchAll(/^train (\d)\/4 \[step (\d) done\]/gm)]
      .at(-1);
    assert.deepEqual([lastProgress?.[1], lastProgress?.[2]], [done, step]);
    assert.match(
      stopped.stderr,
      new RegExp(`: deno task train --resume ${runId} --store ${store}\n`),
    );
    // The runs list counts finished steps as the message did, of the steps asked for.
    assert.deepEqual(
      (await runs(store)).map((r) => [r.status, r.steps_done, r.steps]),
      [["interrupted", Number(done), 4]],
    );

    // The resume, stopped twice as soon as it names the run (on stderr under --format json):
    // it quits without waiting for its step, and the run is still interrupted.
    const quit = await interruptTrain(
      ["--resume", runId, "--store", store, "--format", "json"],
      /^run id: /m,
      true,
    );
    assert.equal(quit.code, 130, quit.stderr);
    assert.doesNotMatch(quit.stderr, /^error:/m);
    assert.deepEqual((await runs(store)).map((r) => r.status), ["interrupted"]);
    await Deno.remove(dir, { recursive: true });
  },
});
