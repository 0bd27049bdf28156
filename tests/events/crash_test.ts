/**
 * Crash safety: a child appending in a loop is killed with SIGKILL at random points, again and
 * again; afterwards the log verifies, holds every event exactly once and intact, and appending
 * resumes at the right version.
 */
import assert from "node:assert/strict";
import { openStore } from "../../events/mod.ts";
import { storeKinds } from "./stores.ts";
import { seeded, turnEvent } from "./sample-events.ts";

const KILLS = 20;
const appender = new URL("./fixtures/appender.ts", import.meta.url).pathname;

async function runUntilKilled(target: string, seed: number, delayMs: number): Promise<void> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", appender, target, String(seed)],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await reader.read();
  if (value?.trim() !== "ready") {
    const stderr = await new Response(child.stderr).text();
    assert.fail(`the appender stopped before appending (${(await child.status).code}): ${stderr}`);
  }
  // Nobody reads the child's stderr after this; cancel it so the pipe never fills.
  await child.stderr.cancel();
  await new Promise((r) => setTimeout(r, delayMs));
  child.kill("SIGKILL");
  const status = await child.status;
  assert.equal(status.signal, "SIGKILL");
  await reader.cancel();
}

for (const { kind, make, ignore } of storeKinds) {
  Deno.test({
    name: `${kind}: SIGKILL during appends ${KILLS} times leaves a whole, resumable log`,
    ignore,
    async fn() {
      const t = await make();
      try {
        await (await openStore(t.target)).close();
        const rand = seeded(42);
        for (let i = 0; i < KILLS; i++) await runUntilKilled(t.target, i + 1, rand() * 80);

        const store = await openStore(t.target);
        try {
          const report = await store.verify();
          assert.equal(report.ok, true, JSON.stringify(report.problems));
          const version = await store.streamVersion("crash");
          assert.ok(version >= KILLS, `only ${version} events survived ${KILLS} runs`);
          let expected = 1;
          for await (const e of store.readStream("crash")) {
            assert.equal(e.version, expected);
            assert.equal(e.position, expected);
            const want = turnEvent(
              { step: 0, prompt: 0, sample: 0, turn: expected - 1 },
              seeded(expected),
            );
            assert.deepEqual({ type: e.type, data: e.data }, want, `event ${expected} is torn`);
            expected++;
          }
          assert.equal(expected - 1, version);
          const next = (v: number) =>
            turnEvent({ step: 0, prompt: 0, sample: 0, turn: v - 1 }, seeded(v));
          const resumed = await store.append("crash", [next(version), next(version + 1)], {
            expectedVersion: version - 1,
          });
          assert.deepEqual(resumed.appended.map((a) => a.version), [version + 1]);
          assert.equal(resumed.skipped.length, 1);
        } finally {
          await store.close();
        }
      } finally {
        await t.dispose();
      }
    },
  });
}
