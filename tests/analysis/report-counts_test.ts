/**
 * `deno task report` prints counts with every digit: a run's 43008 trainable parameters (two
 * worker groups of 21504) are "43008" in the cost table, not "43010" as 4 significant figures
 * would have it; the measured means beside it keep theirs.
 */
import assert from "node:assert/strict";
import { runCli } from "../support/run-cli.ts";
import { fakeRunEvents } from "../support/fake-run.ts";
import { runSpec, tempStore } from "./fixtures/fill-store.ts";

/** The runs' worker groups as a LoRA of 21504 parameters each would record them. */
const TRAINABLE_PER_GROUP = 21504;

Deno.test("report: trainable parameters are counted in full in the cost table", async () => {
  const { store, dir } = await tempStore();
  try {
    for (const estimator of ["grpo", "dr-mas"]) {
      const spec = runSpec({ runId: `${estimator}-1`, estimator, steps: 1 });
      for (const events of fakeRunEvents(spec)) {
        await store.append(
          spec.runId,
          events.map((e) =>
            e.type === "policy.initialized"
              ? { ...e, data: { ...e.data, trainableParameterCount: TRAINABLE_PER_GROUP } }
              : e
          ),
        );
      }
    }
    await store.close();
    const r = await runCli(
      "analysis/cli/report.ts",
      "--store",
      `${dir}/events.sqlite`,
      "--group-by",
      "estimator",
      "--baseline",
      "estimator=grpo",
    );
    assert.equal(r.code, 0, r.stderr);
    const cost = r.stdout.split("## Cost\n")[1].trim().split("\n");
    assert.equal(
      cost[0],
      "| estimator | tokens/question | turns/trajectory | trainable params | gain/param (vs baseline) |",
    );
    const params = cost.slice(2).map((row) => row.split("|").map((c) => c.trim()).slice(1, -1))
      .map(([group, , , trainable]) => [group, trainable]);
    assert.deepEqual(params, [["dr-mas", "43008"], ["grpo", "43008"]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
