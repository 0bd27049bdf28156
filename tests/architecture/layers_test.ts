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

/**
 * Known exceptions, reported by issue 35 (item 4 fixed adapters/onnx, whose files imported
 * adapters/onnx/mod.ts, which re-exported the train step that imported them; item 2 fixed
 * engine/{evaluation,trainer,workers}, which imported each other in a circle): remove an entry
 * once its folder is fixed, never add one.
 */
const KNOWN_OWN_BARREL_IMPORTS = [
  "engine/workflows/examples/planner-executors.ts -> engine/workflows/mod.ts",
  "study/cli/study.ts -> study/mod.ts",
];
const KNOWN_SUB_FOLDER_CYCLES = [
  "web/data <-> web/islands <-> web/pages <-> web/server",
];
const KNOWN_SUB_FOLDER_BYPASSES = [
  "adapters/model/continuous-batch.ts -> adapters/onnx/train-step/spec.ts",
  "adapters/model/graphs.ts -> adapters/onnx/train-step/loss.ts",
  "adapters/model/graphs.ts -> adapters/onnx/train-step/spec.ts",
  "adapters/model/init.ts -> adapters/onnx/train-step/spec.ts",
  "adapters/model/parameters.ts -> adapters/onnx/train-step/spec.ts",
  "adapters/model/supervised.ts -> adapters/onnx/train-step/batch.ts",
  "adapters/model/supervised.ts -> adapters/onnx/train-step/runner.ts",
  "adapters/model/weights.ts -> adapters/onnx/train-step/runner.ts",
  "adapters/model/weights.ts -> adapters/onnx/train-step/spec.ts",
  "analysis/mod.ts -> analysis/report/report-numbers.ts",
  "engine/cli/docs.ts -> engine/advantages/estimator-table.ts",
  "engine/cli/docs.ts -> engine/config/config-reference.ts",
  "engine/cli/grade.ts -> engine/tasks/math/options.ts",
  "engine/cli/pretrain.ts -> engine/workflows/actions.ts",
  "engine/evaluation/model-source.ts -> engine/config/schema.ts",
  "engine/evaluation/team.ts -> engine/config/schema.ts",
  "engine/pretrain/corpus.ts -> engine/workflows/template.ts",
  "engine/pretrain/search-corpus.ts -> engine/workflows/template.ts",
  "events/mod.ts -> events/cli/command.ts",
];

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
  ];
  assert.deepEqual(ownBarrelImports(edges).map((e) => e.from), [
    "adapters/onnx/optim/adamw.ts",
    "adapters/onnx/train-step/graph.ts",
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
    KNOWN_OWN_BARREL_IMPORTS,
    `files that import the mod.ts of their own folder (import the concrete module instead; ` +
      `the known exceptions are listed in this test):\n${ownBarrel.join("\n")}`,
  );
  const cycles = subFolderCycles(edges).map((cycle) => cycle.join(" <-> "));
  assert.deepEqual(
    cycles,
    KNOWN_SUB_FOLDER_CYCLES,
    `sub-folders that import each other in a circle (the known exceptions are listed in this ` +
      `test):\n${cycles.join("\n")}`,
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
    KNOWN_SUB_FOLDER_BYPASSES,
    `imports into a sub-folder with a mod.ts that go around it (import its mod.ts; the known ` +
      `exceptions are listed in this test):\n${bypasses.join("\n")}`,
  );
});
