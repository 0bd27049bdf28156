/**
 * Attacks through the real `deno task sql` (analysis/cli/sql.ts), one-shot and at the
 * interactive prompt: SQL that would write the projections, files or extensions. Each is refused
 * with exit 2 (or the prompt's error line) and its message; the store and the projections are
 * byte-identical afterwards, and the one file written anywhere is the `--out` asked for.
 */
import assert from "node:assert/strict";
import { attackedStore, fileDigests } from "./sql-files.ts";

const CLI = new URL("../../analysis/cli/sql.ts", import.meta.url).pathname;

async function sql(store: string, cwd: string, args: readonly string[], stdin?: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--store", store, ...args],
    cwd,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const { code, stdout, stderr } = await child.output();
  const text = new TextDecoder();
  return { code, stdout: text.decode(stdout), stderr: text.decode(stderr) };
}

const REFUSED = /refused: [A-Z]+ statements are not allowed; DuckDB does not read this as a SELECT/;

Deno.test("deno task sql attacks are refused and leave the store and projections byte-identical", async (t) => {
  await using store = await attackedStore();
  const cwd = await Deno.makeTempDir({ prefix: "polyrl-sql-cwd-" });
  try {
    // The first query projects the store; the attacks run on what it left.
    const warm = await sql(store.path, cwd, ["SELECT count(*) AS n FROM evals WHERE c = n"]);
    assert.equal(warm.code, 0, warm.stderr);
    assert.match(warm.stdout, /\|\s+0 \|/);
    const before = await fileDigests(store.dir);
    const target = store.target;

    await t.step("one-shot: EXPLAIN ANALYZE of a write and COPY TO exit 2", async () => {
      for (
        const attack of [
          "EXPLAIN ANALYZE UPDATE evals SET c = n",
          "EXPLAIN ANALYZE DELETE FROM steps",
          `EXPLAIN ANALYZE COPY (SELECT * FROM runs) TO '${target}/x.csv'`,
          "COPY (SELECT * FROM runs) TO 'relative.csv'",
        ]
      ) {
        const r = await sql(store.path, cwd, [attack]);
        assert.equal(r.code, 2, `${attack}: ${r.stderr}`);
        assert.match(r.stderr, REFUSED, attack);
      }
    });

    await t.step("prompt: writes, files, extensions and settings are each refused", async () => {
      const attacks = [
        "EXPLAIN ANALYZE CREATE TABLE pwn AS SELECT 1",
        "EXPLAIN ANALYZE INSERT INTO evals SELECT * FROM evals",
        `EXPORT DATABASE '${target}/export'`,
        `ATTACH '${target}/new.duckdb'`,
        `ATTACH '${target}/rw.duckdb' (READ_WRITE)`,
        "INSTALL httpfs",
        "FORCE INSTALL json",
        "LOAD httpfs",
        "SET autoinstall_known_extensions = true",
        "SET lock_configuration = false",
        "PRAGMA enable_profiling",
        "CALL checkpoint()",
      ];
      const two = `SELECT 1; COPY (SELECT 1) TO '${target}/two.csv'`;
      const input = [...attacks, two].map((a) => `${a};\n`).join("") + ".quit\n";
      const r = await sql(store.path, cwd, [], input);
      assert.equal(r.code, 0, r.stderr);
      const refusals = r.stderr.split("\n").filter((l) => REFUSED.test(l));
      assert.equal(refusals.length, attacks.length, r.stderr);
      assert.match(r.stderr, /malformed SQL: expected exactly one statement, got 2/);
    });

    await t.step(
      "reading local files is the user's right; --out is the one file written",
      async () => {
        await Deno.writeTextFile(`${cwd}/mine.csv`, "a\n1\n2\n");
        const read = await sql(store.path, cwd, ["SELECT sum(a) AS s FROM read_csv('mine.csv')"]);
        assert.equal(read.code, 0, read.stderr);
        assert.match(read.stdout, /\|\s+3 \|/);
        const out = await sql(store.path, cwd, [
          "SELECT run_id FROM runs -- ) TO 'elsewhere.parquet'",
          "--format",
          "parquet",
          "--out",
          "runs.parquet",
        ]);
        assert.equal(out.code, 0, out.stderr);
        const check = await sql(store.path, cwd, ["SELECT count(*) AS n FROM 'runs.parquet'"]);
        assert.match(check.stdout, /\|\s+5 \|/);
      },
    );

    assert.deepEqual(await fileDigests(store.dir), before, "store and projections unchanged");
    assert.deepEqual(await fileDigests(target), {}, "nothing written where attacks aimed");
    assert.deepEqual(Object.keys(await fileDigests(cwd)).sort(), ["mine.csv", "runs.parquet"]);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});
