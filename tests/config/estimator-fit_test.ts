/**
 * What an estimator needs of a config is its registry entry's declaration (engine/advantages/
 * registry.ts): the workflow it names and the reward weights its reward scheme reads. No check
 * compares the estimator's name; a config that does not fit is refused before anything runs,
 * through the real `train` CLI too.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ESTIMATOR_NAMES, estimatorEntry } from "../../engine/advantages/mod.ts";
import { parseConfig, presetInput, presetNames } from "../../engine/config/mod.ts";
import { runCli } from "../support/run-cli.ts";
import { assertIssue, issuesOf } from "./fixture.ts";

const refine = () => presetInput("smoke") as Record<string, unknown>;

/** The estimators a refine workflow accepts: those whose entry names no workflow. */
const FOR_REFINE = "dr-mas, grpo, dr-grpo, rloo, rloo-trajectory, reinforce++, " +
  "reinforce++-trajectory";

Deno.test("an estimator's declared workflow is required, and the refusal lists those that fit", () => {
  for (const kind of ESTIMATOR_NAMES) {
    const needed = estimatorEntry(kind).workflow;
    const config = { ...refine(), estimator: { kind } };
    if (needed === undefined) {
      assert.equal(parseConfig(config).estimator.kind, kind);
      continue;
    }
    assertIssue(
      issuesOf(config),
      "estimator.kind",
      kind,
      new RegExp(
        `^an estimator for a refine workflow \\(${kind} needs workflow.kind "${needed}"\\): ` +
          `one of ${FOR_REFINE.replaceAll("+", "\\+")}$`,
      ),
    );
    // The workflow it names is a real one: a preset of that kind takes the estimator.
    const preset = presetNames().find((p) =>
      (presetInput(p) as { workflow: { kind: string } }).workflow.kind === needed
    );
    assert.ok(preset, `no preset runs workflow ${needed}, which estimator ${kind} needs`);
    const fitting = { ...presetInput(preset) as object, estimator: { kind } };
    assert.equal(parseConfig(fitting).workflow.kind, needed);
  }
  assert.deepEqual(
    ESTIMATOR_NAMES.filter((k) => estimatorEntry(k).workflow === undefined).join(", "),
    FOR_REFINE,
  );
});

Deno.test("the reward weights allowed are those of the estimator's reward scheme", () => {
  assert.equal(estimatorEntry("mada").rewards, "mada");
  const madaFormat = issuesOf({
    ...presetInput("debate-mada") as object,
    rewards: { weights: { accuracy: 2, format: 1 } },
  });
  assertIssue(
    madaFormat,
    "rewards.weights.format",
    1,
    /^only accuracy and length weights under estimator mada \(its reward is a·acc \+ l·len\)$/,
  );
  // Under the trajectory scheme a format weight is one more weighted component.
  for (const kind of ESTIMATOR_NAMES.filter((k) => estimatorEntry(k).rewards === "trajectory")) {
    const config = { ...refine(), estimator: { kind }, rewards: { weights: { format: 1 } } };
    assert.deepEqual(parseConfig(config).rewards.weights, { format: 1 });
  }
});

Deno.test("train refuses mada on a refine workflow with exit 2, naming the key and the fix, and records nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-estimator-fit-" });
  try {
    const store = join(dir, "events.sqlite");
    const refused = await runCli(
      "engine/cli/train.ts",
      "--preset",
      "smoke",
      "--set",
      "estimator.kind=mada",
      "--store",
      store,
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.ok(
      refused.stderr.includes(
        `estimator.kind = "mada" is not allowed; expected an estimator for a refine workflow ` +
          `(mada needs workflow.kind "debate"): one of ${FOR_REFINE}`,
      ),
      refused.stderr,
    );
    assert.equal(refused.stdout, "");
    await assert.rejects(() => Deno.stat(store), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
