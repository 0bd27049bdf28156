/**
 * Two `deno task train` with one `--run-id` on one SQLite store: the second is refused with a
 * message naming the run, the process that writes it and what to do (not "stream same is at
 * version 21, expected 0"), and the store is byte-identical afterwards: the loser wrote nothing.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { fingerprint } from "./store-helpers.ts";

const TRAIN = "engine/cli/train.ts";

async function waitFor(what: string, check: () => Promise<boolean>, ms = 120_000) {
  const until = Date.now() + ms;
  while (!await check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

Deno.test({
  name: "a second trainer of one run id is told another process writes it; the store unchanged",
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "polyrl-run-id-taken-" });
    const store = `${dir}/events.sqlite`;
    const train = ["--preset", "smoke", "--steps", "10", "--device", "cpu", "--run-id", "same"];
    const first = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", TRAIN, ...train, "--store", store],
      stdout: "null",
      stderr: "null",
    }).spawn();
    try {
      await waitFor("the first writer's lease", async () => {
        try {
          await using s = await openStore(store, { readOnly: true });
          return (await s.leases()).some((l) => l.runId === "same" && l.pid === first.pid);
        } catch {
          return false;
        }
      });
      // Stopped, the first writer holds its run and its lease but appends nothing meanwhile.
      first.kill("SIGSTOP");
      const before = await fingerprint(dir);
      const second = await runCli(TRAIN, ...train, "--store", store);
      assert.equal(second.code, 1, second.stderr);
      assert.match(
        second.stderr,
        new RegExp(
          `run same is already in this store \\(\\d+ events\\): process ${first.pid} on .* is ` +
            "writing it \\(another train with --run-id same\\); this one recorded nothing. Pick " +
            "another --run-id, or wait for that run to end",
        ),
      );
      assert.doesNotMatch(second.stderr, /expected 0/);
      assert.deepEqual(await fingerprint(dir), before, "the store is byte-identical");
    } finally {
      first.kill("SIGKILL");
      await first.status;
    }
    await Deno.remove(dir, { recursive: true });
  },
});
