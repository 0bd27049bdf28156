/**
 * The README's estimator table is generated from the registry (`deno task docs` writes it
 * between two markers): this test fails when README.md's copy differs, and the generator keeps
 * every cell of every entry and the text around the markers.
 */
import assert from "node:assert/strict";
import {
  ESTIMATOR_TABLE_BEGIN,
  ESTIMATOR_TABLE_END,
  estimatorTable,
  EstimatorTableMarkersError,
  withEstimatorTable,
} from "../../engine/advantages/estimator-table.ts";
import { DEFAULT_ESTIMATOR, ESTIMATOR_REGISTRY } from "../../engine/advantages/mod.ts";

const README = new URL("../../README.md", import.meta.url);

Deno.test("README.md's estimator table is the registry's (regenerate it with deno task docs)", async () => {
  const readme = await Deno.readTextFile(README);
  assert.ok(
    readme === withEstimatorTable(readme),
    "README.md's estimator table differs from engine/advantages/registry.ts: run deno task docs",
  );
});

Deno.test("the table has one row per registry entry, with its scope, formula and source", () => {
  const rows = estimatorTable().split("\n").slice(2).map((line) =>
    line.slice(2, -2).split(" | ").map((cell) => cell.trim())
  );
  assert.deepEqual(
    rows,
    Object.entries(ESTIMATOR_REGISTRY).map(([name, entry]) => [
      name === DEFAULT_ESTIMATOR ? `\`${name}\` (default)` : `\`${name}\``,
      entry.scope,
      entry.formula,
      entry.source,
    ]),
  );
  // Padded as deno fmt pads a table: every line as long as the header's.
  const lengths = new Set(estimatorTable().split("\n").map((l) => l.length));
  assert.equal(lengths.size, 1);
});

Deno.test("the table replaces what stands between the markers and nothing else", () => {
  const document = `# Title\n\nbefore\n\n${ESTIMATOR_TABLE_BEGIN}\n\n| stale | table |\n\n` +
    `${ESTIMATOR_TABLE_END}\n\nafter\n`;
  assert.equal(
    withEstimatorTable(document),
    `# Title\n\nbefore\n\n${ESTIMATOR_TABLE_BEGIN}\n\n${estimatorTable()}\n\n` +
      `${ESTIMATOR_TABLE_END}\n\nafter\n`,
  );
  const fresh = withEstimatorTable(document);
  assert.equal(withEstimatorTable(fresh), fresh);
});

Deno.test("a document without the markers, or with them swapped, is refused naming it and the fix", () => {
  for (
    const document of ["no table here\n", `${ESTIMATOR_TABLE_END}\n${ESTIMATOR_TABLE_BEGIN}\n`]
  ) {
    assert.throws(
      () => withEstimatorTable(document, "docs/OTHER.md"),
      (e: Error) =>
        e instanceof EstimatorTableMarkersError &&
        e.message.startsWith("docs/OTHER.md has no place for the estimator table") &&
        e.message.includes(`put the lines ${ESTIMATOR_TABLE_BEGIN} and ${ESTIMATOR_TABLE_END}`),
    );
  }
});
