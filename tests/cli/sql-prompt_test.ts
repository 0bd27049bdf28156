/**
 * `deno task sql`'s prompt fed through a pipe, as a script would: `.help`, `.tables`,
 * `.schema [TABLE]`, `.mode table|csv|json`, statements over several lines, mistakes that leave
 * the prompt running, and `.quit`.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../events/mod.ts";
import { EXPORTED } from "../../analysis/projections/schema.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

async function prompt(store: string, input: string[], ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "analysis/cli/sql.ts", "--store", store, ...args],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input.join("\n") + "\n"));
  await writer.close();
  const out = await child.output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

Deno.test("sql prompt: .help, .tables, .schema, .mode and .quit through a pipe", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-sql-prompt-" });
  try {
    const store = join(dir, "events.sqlite");
    await (await openStore(store)).close();
    const out = await prompt(store, [
      ".help",
      ".tables",
      ".schema runs",
      ".mode csv",
      "SELECT 1 AS x, 'a,b' AS y;",
      ".mode",
      ".mode json",
      "SELECT",
      "  2 AS z;",
      ".mode xml",
      ".schema no_such_table",
      ".schema runs extra",
      ".bogus",
      "SELEC 3;",
      ".quit",
      "SELECT 99 AS after_quit;",
    ]);
    assert.equal(out.code, 0, out.stderr);
    const stdout = out.stdout;
    for (
      const command of [".help", ".tables", ".schema [TABLE]", ".mode table|csv|json", ".quit"]
    ) {
      assert.ok(stdout.includes(`  ${command} `), `.help lists ${command}:\n${stdout}`);
    }
    for (const table of EXPORTED) assert.match(stdout, new RegExp(`^${table}$`, "m"));
    assert.match(stdout, /^\| runs +\| run_id +\| VARCHAR +\|$/m, ".schema runs shows its columns");
    assert.match(stdout, /^\| runs +\| last_step +\| BIGINT +\|$/m);
    assert.match(stdout, /^x,y\n1,"a,b"$/m, ".mode csv prints CSV");
    assert.match(stdout, /^csv$/m, ".mode alone names the mode");
    assert.deepEqual(JSON.parse(stdout.slice(stdout.lastIndexOf("["))), [{ z: 2 }]);
    assert.doesNotMatch(stdout, /after_quit/, ".quit stops reading");
    assert.match(out.stderr, /error: \.mode takes one of table, csv, json; got xml/);
    assert.match(out.stderr, /error: no table no_such_table; \.tables lists the analysis tables/);
    assert.match(out.stderr, /error: \.schema takes at most one argument/);
    assert.match(out.stderr, /error: unknown command \.bogus; \.help lists the commands/);
    assert.match(out.stderr, /error: .*syntax error/i, "a bad statement is reported, not fatal");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sql prompt: .schema alone lists every analysis table; --format sets the first mode", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-sql-prompt-" });
  try {
    const store = join(dir, "events.sqlite");
    await (await openStore(store)).close();
    const out = await prompt(store, [".mode", ".schema"], "--format", "csv");
    assert.equal(out.code, 0, out.stderr);
    const [mode, header, ...rows] = out.stdout.trim().split("\n");
    assert.equal(mode, "csv");
    assert.equal(header, "table,column,type");
    const tables = new Set(rows.map((r) => r.split(",")[0]));
    assert.deepEqual([...tables].sort(), [...EXPORTED].sort());
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
