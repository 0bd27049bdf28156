/**
 * The trajectory browser shows what each trajectory was asked and its gold answer: from a real
 * `train --preset smoke` run (rollouts and validation), read through the real app with
 * `app.request()`; a run logged before `trajectory.completed` v2 says they were not recorded.
 */
import assert from "node:assert/strict";
import { type NewEvent, openStore } from "../../events/mod.ts";
import { NOT_RECORDED } from "../../web/pages/trajectory-task.tsx";
import { asTrajectoryV1, trajectoryV1Catalogue } from "../events/fixtures/trajectory-v1.ts";
import { runCli } from "../support/run-cli.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { dashboardAppOver, dashboardRun } from "./fixtures/dashboard-store.ts";

const dir = await Deno.makeTempDir({ prefix: "polyrl-web-question-" });
const path = `${dir}/events.sqlite`;
const trained = await runCli(
  "engine/cli/train.ts",
  ...["--preset", "smoke", "--steps", "1", "--run-id", "q-new", "--store", path],
);
assert.equal(trained.code, 0, trained.stderr);
{
  await using old = await openStore(path, { catalogue: trajectoryV1Catalogue });
  const spec = { runId: "q-old", seed: 3, estimator: "grpo", steps: 1, prompts: 2, groupSize: 2 };
  for (const events of fakeRunEvents(dashboardRun({ ...spec, evalEvery: 1 }))) {
    await old.append("q-old", events.map(asTrajectoryV1));
  }
}
const dash = await dashboardAppOver(path, () => Deno.remove(dir, { recursive: true }));
// Awaited after the last test: an async close in "unload" races the exit of the process, and
// DuckDB closed while the runtime tears down segfaulted it (exit 139).
Deno.test.afterAll(() => dash.close());

const get = async (url: string) => {
  const res = await dash.app.request(url);
  assert.equal(res.status, 200, url);
  return await res.text();
};

/** Text as the page writes it (preact escapes these three). */
const escape = (t: string) =>
  t.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll('"', "&quot;");

/** Each shown trajectory's block: from its opening tag to the next one's. */
const blocks = (body: string) =>
  new Map(
    body.split('<div class="trajectory"').slice(1).map((b) => [
      b.match(/data-trajectory="([^"]+)"/)![1],
      b,
    ]),
  );

async function logged(runId: string, phase: string) {
  await using store = await openStore(path, { readOnly: true });
  const out = [];
  for await (const e of store.readStream(runId)) {
    const n = e as NewEvent;
    if (n.type === "trajectory.completed" && n.data.phase === phase) out.push(n.data);
  }
  return out;
}

for (const phase of ["rollout", "eval"]) {
  Deno.test(`trajectory browser: each ${phase} trajectory shows its question and gold answer`, async () => {
    const want = await logged("q-new", phase);
    assert.ok(want.length > 0);
    const shown = blocks(await get(`/runs/q-new?phase=${phase}&step=0`));
    assert.equal(shown.size, Math.min(want.length, 8));
    // Every shown block is a logged trajectory, so the loop below checks each of them.
    const checked = want.filter((t) => shown.has(t.trajectory));
    assert.equal(checked.length, shown.size);
    for (const t of checked) {
      assert.ok(t.question !== null && t.question.length > 0, "the engine records the question");
      assert.ok(t.gold !== null, "every smoke task has a reference answer");
      const block = shown.get(t.trajectory)!;
      assert.ok(
        block.includes(`<dd data-field="question">${escape(t.question)}</dd>`),
        `${t.trajectory}: question ${t.question}`,
      );
      assert.ok(block.includes(`<dd data-field="gold">${escape(t.gold)}</dd>`), t.gold);
      // Shown above the turns, not among them.
      assert.ok(block.indexOf('data-field="question"') < block.indexOf("<table"));
      assert.ok(!block.includes(NOT_RECORDED));
    }
  });
}

Deno.test("trajectory browser: a run logged before trajectory.completed v2 says not recorded", async () => {
  const want = await logged("q-old", "rollout");
  assert.ok(want.length > 0);
  assert.ok(want.every((t) => t.question === null && t.gold === null));
  const shown = blocks(await get(`/runs/q-old?phase=rollout&step=0`));
  assert.equal(shown.size, want.length);
  for (const block of shown.values()) {
    assert.match(
      block,
      new RegExp(
        `<dd data-field="question" class="muted">${NOT_RECORDED.replace(/[()]/g, "\\$&")}`,
      ),
    );
    assert.equal(block.split(NOT_RECORDED).length - 1, 2, "question and gold both say so");
  }
});
