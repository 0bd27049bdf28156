/**
 * `deno task grade --format table|json|csv`, with `--json` kept as `--format json`: one pair and a
 * JSONL batch in each format, and a conflicting pair of flags refused as bad usage.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/run-cli.ts";

const PAIR = ["--gold", "$\\frac{1}{2}$", "--pred", "so $\\boxed{0.5}$"];

Deno.test("grade: one pair as table, json (also --json) and csv", async () => {
  const table = await runCli("engine/cli/grade.ts", ...PAIR);
  assert.equal(table.code, 0, table.stderr);
  assert.match(table.stdout, /^equivalent: yes$/m);
  const json = await runCli("engine/cli/grade.ts", ...PAIR, "--format", "json");
  assert.equal(JSON.parse(json.stdout).equivalent, true);
  const alias = await runCli("engine/cli/grade.ts", ...PAIR, "--json");
  assert.equal(alias.stdout, json.stdout, "--json is --format json");
  const csv = await runCli("engine/cli/grade.ts", ...PAIR, "--format", "csv");
  assert.equal(csv.code, 0, csv.stderr);
  assert.deepEqual(csv.stdout.trim().split("\n"), [
    "equivalent,gold,gold_parsed,pred,pred_parsed,reason",
    `true,\\frac{1}{2},1/2,0.5,0.5,${JSON.parse(json.stdout).reason}`,
  ]);
});

Deno.test("grade: a batch as json lines (the default), csv and table", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-grade-" });
  try {
    const file = join(dir, "batch.jsonl");
    await Deno.writeTextFile(
      file,
      [JSON.stringify({ gold: "1/2", pred: "0.5", equivalent: true }), "{broken"].join("\n"),
    );
    const lines = await runCli("engine/cli/grade.ts", file);
    assert.equal(lines.code, 0, lines.stderr);
    const records = lines.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(records.map((r) => r.line), [1, 2]);
    const csv = await runCli("engine/cli/grade.ts", file, "--format", "csv");
    const [header, first, second] = csv.stdout.trim().split("\n");
    assert.equal(header, "line,equivalent,gold,gold_parsed,pred,pred_parsed,reason,expected,error");
    assert.match(first, /^1,true,1\/2,1\/2,0\.5,0\.5,[^,]+,true,$/);
    assert.match(second, /^2,,,,,,,,"?line 2: invalid JSON/);
    const table = await runCli("engine/cli/grade.ts", file, "--format", "table");
    assert.match(table.stdout, /^\| line \| equivalent \| gold /m);
    assert.match(table.stdout, /^\(2 rows\)$/m);
    assert.match(table.stderr, /graded 1 of 2 lines/, "the summary stays on stderr");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("grade: --json with another --format, or an unknown format, is bad usage", async () => {
  const conflict = await runCli("engine/cli/grade.ts", ...PAIR, "--json", "--format", "csv");
  assert.equal(conflict.code, 2);
  assert.match(conflict.stderr, /--json and --format csv conflict/);
  const unknown = await runCli("engine/cli/grade.ts", ...PAIR, "--format", "xml");
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /--format must be one of table, json, csv; got xml/);
});
