/**
 * docs/CONFIG.md is the reference the zod schema generates (this test fails when the schema
 * changes and the file was not regenerated with `deno task docs`), covers every key a parsed
 * config holds, and `deno task docs --check` tells a stale file from a current one (the README's
 * estimator table too: tests/advantages/estimator-table_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { z } from "zod";
import { configReference, UndescribedKeyError } from "../../engine/config/config-reference.ts";
import { presetInput, presetNames } from "../../engine/config/mod.ts";
import { experimentConfigSchema } from "../../engine/config/schema.ts";
import { runCli } from "../support/run-cli.ts";

const DOC = new URL("../../docs/CONFIG.md", import.meta.url);
const README = new URL("../../README.md", import.meta.url);
const TABLES = new URL("../../analysis/TABLES.md", import.meta.url);

Deno.test("docs/CONFIG.md matches the schema (regenerate it with deno task docs)", async () => {
  const file = await Deno.readTextFile(DOC);
  assert.ok(
    file === configReference(),
    "docs/CONFIG.md differs from what engine/config/schema.ts gives: run deno task docs",
  );
});

/** Dotted keys of a parsed config, array elements as `[]` (the reference's notation). */
function keysOf(value: unknown, prefix = ""): string[] {
  if (Array.isArray(value)) {
    return value.flatMap((v) =>
      typeof v === "object" && v !== null ? keysOf(v, `${prefix}[]`) : []
    );
  }
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => {
    const key = prefix ? `${prefix}.${k}` : k;
    // A map's keys are data (agent ids, reward components), not config keys.
    if (["agent_to_wg", "rewards.weights", "workflow.params"].includes(key)) return [key];
    return [key, ...keysOf(v, key)];
  });
}

Deno.test("the reference has a row, with a meaning, for every key of every preset", () => {
  const reference = configReference();
  const rows = new Map(
    reference.split("\n").filter((l) => l.startsWith("| `")).map((l) => {
      const cells = l.split(" | ");
      return [cells[0].slice(3, -1), cells[3]] as const;
    }),
  );
  for (const name of presetNames()) {
    for (const key of keysOf(experimentConfigSchema.parse(presetInput(name)))) {
      assert.ok(rows.has(key), `preset ${name}: key ${key} is missing from the reference`);
      assert.ok((rows.get(key) ?? "").length > 3, `${key} has no meaning`);
    }
  }
});

Deno.test("a key without .describe() stops the generator, naming the key", () => {
  const schema = z.strictObject({
    ok: z.number().default(1).describe("a described key"),
    nested: z.strictObject({ bare: z.string() }).describe("a described object"),
  });
  assert.throws(
    () => configReference(schema),
    (err: unknown) => err instanceof UndescribedKeyError && err.key === "nested.bare",
  );
});

Deno.test("deno task docs writes the files; --check passes on them and fails on a stale one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-docs-" });
  try {
    const out = join(dir, "CONFIG.md");
    // A copy of README.md with a stale estimator table, so the repository's own is never written.
    const readme = join(dir, "README.md");
    const current = await Deno.readTextFile(README);
    await Deno.writeTextFile(readme, current.replace(/\| `grpo` .*\n/, ""));
    // And of analysis/TABLES.md, which is current: written, it stays byte for byte as it was.
    const tables = join(dir, "TABLES.md");
    const currentTables = await Deno.readTextFile(TABLES);
    await Deno.writeTextFile(tables, currentTables);
    const docs = (...args: string[]) =>
      runCli("engine/cli/docs.ts", "--out", out, "--readme", readme, "--tables", tables, ...args);
    const missing = await docs("--check");
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /CONFIG.md is missing: run deno task docs/);
    assert.match(
      missing.stderr,
      /README.md is out of date: run deno task docs \(it is generated from engine\/advantages\/registry.ts\)/,
    );
    const write = await docs();
    assert.equal(write.code, 0, write.stderr);
    assert.equal(await Deno.readTextFile(out), await Deno.readTextFile(DOC));
    assert.equal(await Deno.readTextFile(readme), current);
    assert.equal(await Deno.readTextFile(tables), currentTables);
    const fresh = await docs("--check");
    assert.equal(fresh.code, 0, fresh.stderr);
    await Deno.writeTextFile(out, "| `old_key` | number | `1` | gone |\n", { append: true });
    const stale = await docs("--check");
    assert.equal(stale.code, 1);
    assert.match(stale.stderr, /CONFIG.md is out of date: run deno task docs/);
    assert.doesNotMatch(stale.stderr, /README/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
