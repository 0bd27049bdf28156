/**
 * A benchmark is the same for every run seed (tasks.seed chooses the problem set), and a run
 * records what it evaluates on by content.
 */
import assert from "node:assert/strict";
import { parseConfig, presetInput } from "../../engine/config/mod.ts";
import { benchmarkIdentities } from "../../engine/trainer/benchmark-identity.ts";
import { taskSource } from "../../engine/trainer/rollout/task-source.ts";

const identity = async (preset: string, edit: Record<string, unknown>) => {
  const input = { ...presetInput(preset), ...edit } as Record<string, unknown>;
  const config = parseConfig(input, preset);
  const tasks = await taskSource(config);
  return { tasks, ids: benchmarkIdentities(config.evaluation.benchmarks, tasks) };
};

for (const preset of ["refine-drmas", "search-drmas"]) {
  Deno.test(`${preset}: every run seed evaluates on the same problems; tasks.seed changes them`, async () => {
    const seed0 = await identity(preset, { seed: 0 });
    const seed7 = await identity(preset, { seed: 7 });
    assert.deepEqual(seed7.tasks.validation, seed0.tasks.validation);
    assert.deepEqual(seed7.ids, seed0.ids);
    assert.match(seed0.ids.validation.sha256, /^[0-9a-f]{64}$/);
    assert.equal(seed0.ids.validation.problems, seed0.tasks.validation.length);
    const tasks = presetInput(preset).tasks as Record<string, unknown>;
    const other = await identity(preset, { seed: 0, tasks: { ...tasks, seed: 7 } });
    assert.notDeepEqual(other.tasks.validation, seed0.tasks.validation);
    assert.notEqual(other.ids.validation.sha256, seed0.ids.validation.sha256);
  });
}
