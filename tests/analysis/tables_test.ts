/**
 * The table declarations (analysis/projections/tables.ts) drive the rest: the DDL DuckDB creates,
 * the rows an event gives (keyed by column), the Kysely row types, TABLES.md's base-table section
 * (this test fails when the file was not regenerated with `deno task docs`) and the schema
 * version (any change to a declaration or a view changes it, so no bump can be forgotten).
 */
import assert from "node:assert/strict";
import { DuckDBInstance } from "@duckdb/node-api";
import { type NewEvent, type StoredEvent } from "../../events/mod.ts";
import { eventTable, type RowOf, tableDdl } from "../../analysis/projections/define-table.ts";
import { eventRows } from "../../analysis/projections/event-rows.ts";
import { ensureSchema } from "../../analysis/projections/projector.ts";
import { SCHEMA_VERSION, schemaVersion, VIEWS } from "../../analysis/projections/schema.ts";
import { type AnyTable, TABLES } from "../../analysis/projections/tables.ts";
import {
  SECTION_BEGIN,
  SECTION_END,
  tablesDoc,
  TablesDocMarkerError,
  tablesSection,
  withTablesSection,
} from "../../analysis/projections/tables-doc.ts";
import type { AnalysisDb } from "../../analysis/queries/analysis-db.ts";

const DOC = new URL("../../analysis/TABLES.md", import.meta.url);
const ALL: readonly AnyTable[] = Object.values(TABLES);

/** A stored event as the store reads it back, at position 7, version 3. */
function stored<E extends NewEvent>(event: E, stream = "run-1"): StoredEvent<E> {
  return {
    ...event,
    id: "0".repeat(32),
    stream,
    version: 3,
    position: 7,
    schemaVersion: 1,
    storedSchemaVersion: 1,
    hash: "f".repeat(64),
    recordedAt: 1_733_000_000_000,
  };
}

Deno.test("analysis/TABLES.md's base tables are what the declarations give (run deno task docs)", async () => {
  const file = await Deno.readTextFile(DOC);
  assert.ok(
    file === await tablesDoc(file),
    "analysis/TABLES.md differs from what analysis/projections/tables.ts gives: run deno task docs",
  );
});

Deno.test("the generated section has every table, column, type and meaning", () => {
  const section = tablesSection();
  for (const table of ALL) {
    assert.match(section, new RegExp(`^### ${table.name}\n\n`, "m"));
    for (const [name, column] of table.columnList) {
      assert.ok(column.meaning.length > 2, `${table.name}.${name} has no meaning`);
      assert.ok(section.includes(`| ${name} | ${column.type} |`), `${table.name}.${name}`);
    }
  }
});

Deno.test("a TABLES.md without the markers is refused, naming the missing one", () => {
  assert.throws(
    () => withTablesSection("# Analysis tables\n"),
    (err: unknown) => err instanceof TablesDocMarkerError && err.missing === SECTION_BEGIN,
  );
  assert.throws(
    () => withTablesSection(`${SECTION_BEGIN}\n`),
    (err: unknown) => err instanceof TablesDocMarkerError && err.missing === SECTION_END,
  );
  const doc = `# T\n\n${SECTION_BEGIN}\nold text\n${SECTION_END}\n\n## After\n`;
  const out = withTablesSection(doc, [TABLES.checkpoints]);
  assert.ok(out.startsWith("# T\n\n") && out.endsWith("\n\n## After\n"));
  assert.ok(!out.includes("old text") && out.includes("### checkpoints"));
});

Deno.test("DuckDB creates each table with the declared columns, types and order", async () => {
  const instance = await DuckDBInstance.create(":memory:");
  const conn = await instance.connect();
  try {
    await ensureSchema(conn);
    for (const table of ALL) {
      const columns = (await conn.runAndReadAll(
        "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 " +
          "ORDER BY ordinal_position",
        [table.name],
      )).getRows();
      assert.deepEqual(columns, table.columnList.map(([name, c]) => [name, c.type]), table.name);
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  assert.equal(
    tableDdl(TABLES.step_prompts),
    'CREATE TABLE step_prompts ("run_id" VARCHAR, "step" BIGINT, "prompt" BIGINT, ' +
      '"problem_id" VARCHAR)',
  );
});

Deno.test("an event's rows are its tables' columns read from it, NULL where a type has none", () => {
  const failed = eventRows(stored({
    type: "run.failed",
    data: { step: 2, stage: "update", error: { name: "RangeError", message: "bad lr" } },
  }));
  const completed = eventRows(stored({ type: "run.completed", data: { steps: 4, metrics: {} } }));
  const keyed = (rows: ReturnType<typeof eventRows>, table: string) =>
    rows.filter(([t]) => t === table).map(([, values]) =>
      Object.fromEntries(TABLES[table as keyof typeof TABLES].columnList.map(([name], i) => [
        name,
        values[i],
      ]))
    );
  assert.deepEqual(keyed(failed, "run_ended"), [{
    run_id: "run-1",
    position: 7,
    version: 3,
    recorded_at_ms: 1_733_000_000_000,
    status: "failed",
    steps: null,
    metrics_json: null,
    failed_step: 2,
    failed_stage: "update",
    error: "RangeError: bad lr",
  }]);
  assert.deepEqual(keyed(completed, "run_ended")[0].failed_step, null);
  assert.deepEqual(keyed(completed, "run_ended")[0].metrics_json, "{}");
  // Every event has its place in log_events, whatever its type.
  assert.deepEqual(keyed(failed, "log_events"), [{
    stream: "run-1",
    version: 3,
    position: 7,
    recorded_at_ms: 1_733_000_000_000,
  }]);
});

Deno.test("the Kysely row types follow the declarations: nullable where a reader may give null", () => {
  type RunEnded = AnalysisDb["run_ended"];
  const row: RunEnded = {
    run_id: "r",
    position: 1,
    version: 1,
    recorded_at_ms: 0,
    status: "completed",
    steps: null,
    metrics_json: null,
    failed_step: null,
    failed_stage: null,
    error: null,
  };
  // @ts-expect-error: status is never NULL (its reader always gives a string)
  const noStatus: RunEnded = { ...row, status: null };
  // @ts-expect-error: a BIGINT column reads as a number
  const textStep: AnalysisDb["grad_step_rows"]["step"] = "0";
  const lease: RowOf<typeof TABLES.run_leases>["pid_alive"] = null;
  assert.deepEqual([noStatus.status, textStep, lease], [null, "0", null]);
});

Deno.test("the schema version changes with any declaration or view, and only then", () => {
  assert.equal(schemaVersion(ALL, VIEWS), SCHEMA_VERSION);
  assert.ok(Number.isSafeInteger(SCHEMA_VERSION) && SCHEMA_VERSION > 14);
  const withTable = (table: AnyTable) => ALL.map((t) => t.name === table.name ? table : t);
  // checkpoints declared again here, as a change to tables.ts would declare it
  const checkpoints = () =>
    eventTable({
      name: "checkpoints",
      about: TABLES.checkpoints.about,
      events: ["checkpoint.saved"],
      rows: (e) => [e],
    });
  const columns = TABLES.checkpoints.columns;
  const same = checkpoints().columns({ ...columns });
  assert.equal(schemaVersion(withTable(same), VIEWS), SCHEMA_VERSION);
  const changed = [
    checkpoints().columns({
      ...columns,
      extra: { type: "BIGINT", meaning: "a column added", value: (e) => e.data.bytes },
    }),
    checkpoints().columns({
      ...columns,
      bytes: { type: "DOUBLE", meaning: "its type changed", value: (e) => e.data.bytes },
    }),
    checkpoints().columns({
      ...columns,
      bytes: { type: "BIGINT", meaning: "what it holds changed", value: (e) => e.data.bytes * 2 },
    }),
  ];
  for (const table of changed) {
    assert.notEqual(schemaVersion(withTable(table), VIEWS), SCHEMA_VERSION);
  }
  const views = VIEWS.map(([name, ddl]) =>
    [
      name,
      name === "runs" ? ddl.replace("SELECT s.run_id", "SELECT DISTINCT s.run_id") : ddl,
    ] as const
  );
  assert.notEqual(schemaVersion(ALL, views), SCHEMA_VERSION);
});
