/**
 * The layers of docs/ARCHITECTURE.md, enforced: every relative import in the source folders goes
 * down a layer (or stays in its folder), enters another folder only through a `mod.ts`, and never
 * reaches another folder's `_private.ts` file.
 */
import assert from "node:assert/strict";
import { findViolations, LAYERS, readImportGraph } from "./import-graph.ts";

const root = new URL("../../", import.meta.url).pathname;

Deno.test("architecture: the rules catch each kind of bad import", () => {
  const edges = [
    { from: "events/store/open-store.ts", to: "engine/config/mod.ts" },
    { from: "engine/trainer/train-loop.ts", to: "adapters/onnx/train-step-runner.ts" },
    { from: "web/server/app.tsx", to: "analysis/stats/_welch-core.ts" },
    { from: "engine/trainer/train-loop.ts", to: "adapters/onnx/mod.ts" },
    { from: "engine/trainer/train-loop.ts", to: "engine/config/schema.ts" },
    { from: "analysis/stats/welch.ts", to: "analysis/stats/_welch-core.ts" },
    { from: "study/cli.ts", to: "analysis/mod.ts" },
  ];
  assert.deepEqual(findViolations(edges).map((v) => [v.from, v.rule]), [
    ["events/store/open-store.ts", "upward"],
    ["engine/trainer/train-loop.ts", "not-through-mod"],
    ["web/server/app.tsx", "private-file"],
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
