/**
 * The layers of docs/ARCHITECTURE.md, enforced: every relative import in the source folders goes
 * down a layer (or stays in its folder) and enters another folder only through a `mod.ts`. Inside a
 * folder, no file imports the folder's own `mod.ts`, its sub-folders import each other in no
 * circle, and a sub-folder with a `mod.ts` is entered through it.
 */
import assert from "node:assert/strict";
import {
  findViolations,
  LAYERS,
  ownBarrelImports,
  readImportGraph,
  subFolderBypasses,
  subFolderCycles,
} from "./import-graph.ts";

const root = new URL("../../", import.meta.url).pathname;

Deno.test("architecture: the rules catch each kind of bad import", () => {
  const edges = [
    { from: "events/store/open-store.ts", to: "engine/config/mod.ts" },
    { from: "engine/trainer/train-loop.ts", to: "adapters/onnx/train-step/runner.ts" },
    { from: "study/cli/study.ts", to: "web/mod.ts" },
    { from: "engine/trainer/train-loop.ts", to: "adapters/onnx/mod.ts" },
    { from: "engine/trainer/train-loop.ts", to: "engine/config/schema.ts" },
    { from: "study/cli.ts", to: "analysis/mod.ts" },
  ];
  assert.deepEqual(findViolations(edges).map((v) => [v.from, v.rule]), [
    ["events/store/open-store.ts", "upward"],
    ["engine/trainer/train-loop.ts", "not-through-mod"],
    ["study/cli/study.ts", "upward"],
  ]);
});

Deno.test("architecture: the source folders import only down the layers, through mod.ts", async () => {
  const edges = await readImportGraph(root);
  const sources = new Set(edges.map((e) => e.from.split("/")[0]));
  // The graph must have been read: every layer that holds code shows up as an importer.
  for (const folder of ["events", "adapters", "engine", "analysis", "web"]) {
    assert.ok(
      sources.has(folder),
      `no imports read from ${folder}/ (layers: ${Object.keys(LAYERS)})`,
    );
  }
  assert.ok(edges.length > 500, `only ${edges.length} imports read`);
  const broken = findViolations(edges).map((v) => `${v.from} -> ${v.to} (${v.rule})`);
  assert.deepEqual(
    broken,
    [],
    `imports that break docs/ARCHITECTURE.md's layers:\n${broken.join("\n")}`,
  );
});

Deno.test("architecture: the folder rules catch a file importing its own mod.ts and sub-folders in a circle", () => {
  const edges = [
    { from: "adapters/onnx/optim/adamw.ts", to: "adapters/onnx/mod.ts" },
    { from: "adapters/onnx/train-step/graph.ts", to: "adapters/onnx/mod.ts" },
    { from: "adapters/onnx/train-step/graph.ts", to: "adapters/onnx/optim/mod.ts" },
    { from: "adapters/model/graphs.ts", to: "adapters/onnx/mod.ts" },
    { from: "adapters/onnx/ops/binary.ts", to: "adapters/onnx/ops/reduce.ts" },
    { from: "adapters/onnx/ops/reduce.ts", to: "adapters/onnx/ops/binary.ts" },
    { from: "adapters/onnx/optim/clip-grad.ts", to: "adapters/onnx/ops/binary.ts" },
    { from: "adapters/onnx/ops/binary.ts", to: "adapters/onnx/ir.ts" },
    { from: "adapters/onnx/autodiff.ts", to: "adapters/onnx/ops/binary.ts" },
    { from: "engine/trainer/train-loop.ts", to: "engine/workers/mod.ts" },
    { from: "engine/workers/played-episodes.ts", to: "engine/trainer/rollout/speaker.ts" },
    // A user's module kept as an example imports the public face, unless a source file imports it.
    { from: "engine/workflows/examples/planner-executors.ts", to: "engine/workflows/mod.ts" },
    { from: "adapters/onnx/examples/tiny-graph.ts", to: "adapters/onnx/mod.ts" },
    { from: "adapters/onnx/mod.ts", to: "adapters/onnx/examples/tiny-graph.ts" },
  ];
  assert.deepEqual(ownBarrelImports(edges).map((e) => e.from), [
    "adapters/onnx/optim/adamw.ts",
    "adapters/onnx/train-step/graph.ts",
    "adapters/onnx/examples/tiny-graph.ts",
  ]);
  assert.deepEqual(
    subFolderCycles([
      ...edges,
      { from: "adapters/onnx/optim/adamw.ts", to: "adapters/onnx/train-step/spec.ts" },
    ]),
    [
      ["adapters/onnx/optim", "adapters/onnx/train-step"],
      ["engine/trainer", "engine/workers"],
    ],
  );
});

Deno.test("architecture: no file imports its own folder's mod.ts, no sub-folders import in a circle", async () => {
  const edges = await readImportGraph(root);
  const ownBarrel = ownBarrelImports(edges).map((e) => `${e.from} -> ${e.to}`).sort();
  assert.deepEqual(
    ownBarrel,
    [],
    `files that import the mod.ts of their own folder (import the concrete module ` +
      `instead):\n${ownBarrel.join("\n")}`,
  );
  const cycles = subFolderCycles(edges).map((cycle) => cycle.join(" <-> "));
  assert.deepEqual(
    cycles,
    [],
    `sub-folders that import each other in a circle (layer them; a type or constant several ` +
      `need goes in the lowest):\n${cycles.join("\n")}`,
  );
});

Deno.test("architecture: the folder rules catch a sub-folder with a mod.ts entered around it", () => {
  const edges = [
    { from: "engine/trainer/rollout/mod.ts", to: "engine/trainer/rollout/speaker.ts" },
    { from: "engine/trainer/rollout/rollouts.ts", to: "engine/trainer/rollout/speaker.ts" },
    { from: "engine/trainer/train-loop.ts", to: "engine/trainer/rollout/speaker.ts" },
    { from: "engine/trainer/train-loop.ts", to: "engine/trainer/rollout/mod.ts" },
    { from: "engine/trainer/run-log/run-events.ts", to: "engine/trainer/rollout/rollouts.ts" },
    { from: "engine/workers/played-episodes.ts", to: "engine/trainer/rollout/speaker.ts" },
    { from: "engine/workers/played-episodes.ts", to: "engine/trainer/evaluate.ts" },
    { from: "engine/trainer/checkpoints.ts", to: "engine/trainer/event-sink.ts" },
    { from: "web/server/app.ts", to: "engine/trainer/rollout/speaker.ts" },
  ];
  assert.deepEqual(subFolderBypasses(edges).map((e) => e.from), [
    "engine/trainer/train-loop.ts",
    "engine/trainer/run-log/run-events.ts",
    "engine/workers/played-episodes.ts",
  ]);
});

Deno.test("architecture: a sub-folder with a mod.ts is entered through it", async () => {
  const bypasses = subFolderBypasses(await readImportGraph(root)).map((e) =>
    `${e.from} -> ${e.to}`
  );
  assert.deepEqual(
    [...new Set(bypasses)].sort(),
    [],
    `imports into a sub-folder with a mod.ts that go around it (import its mod.ts, which ` +
      `exports what belongs to the sub-folder's public face):\n${bypasses.join("\n")}`,
  );
});
