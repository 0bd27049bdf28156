/**
 * User SQL in the CLI can read, and nothing else: DuckDB's logging, profiling and parser
 * functions (which `lock_configuration` does not stop: `enable_logging(storage='file', ...)` then
 * `write_log(...)` wrote CSV files whose contents the query chose, `enable_profiling` wrote its
 * output anywhere) are refused with exit 2 by `deno task sql`, one-shot and at its prompt, and by
 * `deno task report --where`; RESET ALL and IMPORT DATABASE are refused by name (IMPORT DATABASE
 * used to read the folder it names while being checked). Nothing is written where the attacks
 * aim, and the store and projections are byte-identical afterwards.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { REFUSED_FUNCTIONS } from "../../analysis/mod.ts";
import { attackedStore, fileDigests } from "./sql-files.ts";
import { denoTask } from "./task-run.ts";

/**
 * The table functions of DuckDB 1.5 that only read (tables, files where files may be read,
 * settings, metadata) or generate rows. A function DuckDB adds is neither here nor refused: judge
 * it, then list it here or in REFUSED_FUNCTIONS.
 */
const READING_TABLE_FUNCTIONS = [
  "duckdb_approx_database_count",
  "duckdb_columns",
  "duckdb_connection_count",
  "duckdb_constraints",
  "duckdb_coordinate_systems",
  "duckdb_databases",
  "duckdb_dependencies",
  "duckdb_extensions",
  "duckdb_external_file_cache",
  "duckdb_functions",
  "duckdb_indexes",
  "duckdb_keywords",
  "duckdb_log_contexts",
  "duckdb_logs",
  "duckdb_logs_parsed",
  "duckdb_memory",
  "duckdb_optimizers",
  "duckdb_prepared_statements",
  "duckdb_profiling_settings",
  "duckdb_schemas",
  "duckdb_secret_types",
  "duckdb_secrets",
  "duckdb_sequences",
  "duckdb_settings",
  "duckdb_table_sample",
  "duckdb_tables",
  "duckdb_temporary_files",
  "duckdb_types",
  "duckdb_variables",
  "duckdb_views",
  "generate_series",
  "glob",
  "histogram",
  "histogram_values",
  "icu_calendar_names",
  "json_each",
  "json_tree",
  "parquet_bloom_probe",
  "parquet_file_metadata",
  "parquet_full_metadata",
  "parquet_kv_metadata",
  "parquet_metadata",
  "parquet_scan",
  "parquet_schema",
  "pg_timezone_names",
  "pragma_collations",
  "pragma_database_size",
  "pragma_metadata_info",
  "pragma_platform",
  "pragma_show",
  "pragma_storage_info",
  "pragma_table_info",
  "pragma_user_agent",
  "pragma_version",
  "range",
  "read_blob",
  "read_csv",
  "read_csv_auto",
  "read_duckdb",
  "read_json",
  "read_json_auto",
  "read_json_objects",
  "read_json_objects_auto",
  "read_ndjson",
  "read_ndjson_auto",
  "read_ndjson_objects",
  "read_parquet",
  "read_text",
  "repeat",
  "repeat_row",
  "seq_scan",
  "sniff_csv",
  "sql_auto_complete",
  "summary",
  "test_all_types",
  "test_vector_types",
  "unnest",
  "which_secret",
];

Deno.test("every table function of DuckDB is judged: refused, or one that only reads", async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    const rows = (await conn.runAndReadAll(
      "SELECT DISTINCT function_name, function_type FROM duckdb_functions()",
    )).getRowsJS() as [string, string][];
    const tableFunctions = rows.filter(([, type]) => type === "table" || type === "table_macro")
      .map(([name]) => name);
    const unjudged = tableFunctions.filter((name) =>
      !REFUSED_FUNCTIONS.has(name) && !READING_TABLE_FUNCTIONS.includes(name)
    );
    assert.deepEqual(unjudged, [], "table functions neither refused nor known to only read");
    // Every refused name is one of DuckDB's (a typo would refuse nothing).
    const all = new Set(rows.map(([name]) => name));
    assert.deepEqual([...REFUSED_FUNCTIONS.keys()].filter((name) => !all.has(name)), []);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
});

const REFUSED_FUNCTION = /refused: the function (\w+)\(\) is not allowed here/;

Deno.test("deno task sql and report --where cannot log, profile or drive the parser", async (t) => {
  await using store = await attackedStore();
  const work = await Deno.makeTempDir({ prefix: "polyrl-sql-lockdown-" });
  try {
    const s = ["--store", store.path];
    const warm = await denoTask("sql", ["SELECT count(*) AS n FROM runs", ...s], work);
    assert.equal(warm.code, 0, warm.stderr);
    const before = await fileDigests(store.dir);
    const target = store.target;
    // A database export an IMPORT DATABASE would read (and run) while being checked.
    const exported = join(work, "exported");
    await Deno.mkdir(exported);
    await Deno.writeTextFile(join(exported, "schema.sql"), "CREATE TABLE pwned (x INTEGER);\n");
    await Deno.writeTextFile(join(exported, "load.sql"), "INSERT INTO pwned VALUES (1);\n");
    const exportedBefore = await fileDigests(exported);

    await t.step("one-shot: each is exit 2 with the refusal, nothing written", async () => {
      const attacks: [string, RegExp][] = [
        [
          `SELECT * FROM enable_logging(storage='file', storage_path='${target}/logs')`,
          /the function enable_logging\(\)/,
        ],
        [
          `SELECT write_log('id,secret', level := 'error', log_type := 'x') FROM ` +
          `enable_logging(storage='file', storage_path='${target}/logs2')`,
          REFUSED_FUNCTION,
        ],
        [
          `SELECT * FROM enable_profiling(format='json', save_location='${target}/profile.json')`,
          /the function enable_profiling\(\)/,
        ],
        ["RESET ALL", /refused: RESET statements are not allowed/],
        [`IMPORT DATABASE '${exported}'`, /refused: IMPORT statements are not allowed/],
      ];
      for (const [attack, refusal] of attacks) {
        const r = await denoTask("sql", [attack, ...s], work);
        assert.equal(r.code, 2, `${attack}: ${r.stderr}`);
        assert.match(r.stderr, refusal, attack);
      }
    });

    await t.step("prompt: logging then write_log, profiling, parser and SQL text", async () => {
      const attacks = [
        `SELECT * FROM enable_logging(storage='file', storage_path='${target}/logs3')`,
        `SELECT write_log('a,b,c', level := 'error', scope := 'database', log_type := 'csv')`,
        `SELECT * FROM enable_profiling(save_location='${target}/profile.txt')`,
        "SELECT * FROM disable_logging()",
        "SELECT * FROM truncate_duckdb_logs()",
        "SELECT * FROM disable_profiling()",
        "SELECT * FROM enable_peg_parser()",
        "SELECT json_serialize_sql('SELECT 1')",
        `SELECT json_serialize_plan('COPY (SELECT 1) TO ''${target}/plan.csv''')`,
        `FROM query('SELECT * FROM enable_logging(storage=''file'', storage_path=''${target}/q'')')`,
        "FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))",
        `SELECT (SELECT count(*) FROM "ENABLE_LOGGING"(storage='file', storage_path='${target}/u'))`,
        `SELECT list_transform([1], x -> system.main.write_log('lambda'))`,
        "SELECT * FROM checkpoint()",
      ];
      const input = attacks.map((a) => `${a};\n`).join("") +
        "SELECT count(*) AS n FROM runs;\n.quit\n";
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "task",
          "--config",
          new URL("../../deno.json", import.meta.url).pathname,
          "sql",
          ...s,
        ],
        cwd: work,
        env: { INIT_CWD: work, NO_COLOR: "1" },
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(input));
      await writer.close();
      const out = await child.output();
      const stdout = new TextDecoder().decode(out.stdout);
      const stderr = new TextDecoder().decode(out.stderr);
      assert.equal(out.code, 0, stderr);
      const refused = stderr.split("\n").filter((l) => REFUSED_FUNCTION.test(l));
      assert.equal(refused.length, attacks.length, stderr);
      // The prompt goes on: the query after the attacks runs.
      assert.match(stdout, /\|\s+5 \|/);
    });

    await t.step("report --where: exit 2, the predicate's function named", async () => {
      for (
        const where of [
          `(SELECT count(*) FROM enable_logging(storage='file', storage_path='${target}/r')) = 0`,
          "write_log('x') IS NULL",
          `(SELECT count(*) FROM enable_profiling(save_location='${target}/r.txt')) = 0`,
        ]
      ) {
        const r = await denoTask("report", [...s, "--where", where], work);
        assert.equal(r.code, 2, `${where}: ${r.stderr}`);
        assert.match(r.stderr, REFUSED_FUNCTION, where);
      }
    });

    assert.deepEqual(await fileDigests(store.dir), before, "store and projections unchanged");
    assert.deepEqual(await fileDigests(target), {}, "nothing written where attacks aimed");
    assert.deepEqual(await fileDigests(exported), exportedBefore);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
