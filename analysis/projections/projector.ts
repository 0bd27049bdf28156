import type { DuckDBConnection } from "@duckdb/node-api";
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { appendRows } from "./append-rows.ts";
import { eventRows } from "./event-rows.ts";
import { SCHEMA_VERSION, STATE_DDL, tableDdl, type TableName, TABLES, VIEWS } from "./schema.ts";

const STATE = "analysis";

/** What one catch-up did: the positions it covered and how many events and rows it wrote. */
export interface CatchUpResult {
  readonly kind: "catch-up";
  /** Last position projected before, and after. */
  readonly from: number;
  readonly to: number;
  readonly events: number;
  readonly rows: number;
}

async function statePosition(conn: DuckDBConnection): Promise<number | null> {
  const rows = (await conn.runAndReadAll(
    "SELECT position, schema_version FROM projection_state WHERE name = $1",
    [STATE],
  )).getRowObjectsJS();
  if (rows.length === 0 || Number(rows[0].schema_version) !== SCHEMA_VERSION) return null;
  return Number(rows[0].position);
}

async function dropAll(conn: DuckDBConnection): Promise<void> {
  for (const [name, ddl] of [...VIEWS].reverse()) {
    await conn.run(
      ddl.includes("MACRO") ? `DROP MACRO IF EXISTS ${name}` : `DROP VIEW IF EXISTS ${name}`,
    );
  }
  for (const name of Object.keys(TABLES).reverse()) await conn.run(`DROP TABLE IF EXISTS ${name}`);
  await conn.run("DROP TABLE IF EXISTS projection_state");
}

/**
 * Makes sure the projection tables exist at this code's schema version; a projection built by
 * another version (or none) is dropped and recreated empty, at position 0.
 * Returns the last projected global position.
 */
export async function ensureSchema(conn: DuckDBConnection): Promise<number> {
  await conn.run(STATE_DDL);
  const position = await statePosition(conn);
  if (position !== null) return position;
  await conn.run("BEGIN TRANSACTION");
  try {
    await dropAll(conn);
    await conn.run(STATE_DDL);
    for (const spec of Object.values(TABLES)) await conn.run(tableDdl(spec));
    for (const [, ddl] of VIEWS) await conn.run(ddl);
    await conn.run("INSERT INTO projection_state VALUES ($1, 0, $2)", [STATE, SCHEMA_VERSION]);
    await conn.run("COMMIT");
  } catch (err) {
    await conn.run("ROLLBACK");
    throw err;
  }
  return 0;
}

/** Commits the open transaction; on failure rolls it back and rethrows. */
async function commit(conn: DuckDBConnection): Promise<void> {
  try {
    await conn.run("COMMIT");
  } catch (err) {
    await conn.run("ROLLBACK");
    throw err;
  }
}

/**
 * Projects every event after the last projected position, in batches: each batch's rows and the
 * new position commit in one transaction, so a crash never projects an event twice or skips it.
 * DuckDB commits a batch on its own threads while the next batch is read and decoded; that batch
 * waits for the commit before it opens its transaction.
 *
 * @example
 * ```ts
 * const r = await catchUp(conn, store);
 * console.log(`projected ${r.events} events up to position ${r.to}`);
 * ```
 */
export async function catchUp(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
  options: { readonly batchSize?: number } = {},
): Promise<CatchUpResult> {
  const batchSize = options.batchSize ?? 50_000;
  const from = await ensureSchema(conn);
  let position = from;
  let events = 0;
  let rows = 0;
  let pending = 0;
  let buffers = new Map<TableName, unknown[][]>();
  let committing: Promise<void> = Promise.resolve();
  const flush = async () => {
    await committing;
    await conn.run("BEGIN TRANSACTION");
    try {
      await appendRows(conn, buffers);
      await conn.run("UPDATE projection_state SET position = $1 WHERE name = $2", [
        position,
        STATE,
      ]);
    } catch (err) {
      await conn.run("ROLLBACK");
      throw err;
    }
    committing = commit(conn);
    // Marked handled here, rethrown by the next `await committing`: a commit that fails while
    // the next batch is read must not surface as an unhandled rejection.
    committing.catch(() => {});
    buffers = new Map();
    pending = 0;
  };
  try {
    for await (const event of store.readAll({ from: from + 1 })) {
      for (const [table, row] of eventRows(event)) {
        let buf = buffers.get(table);
        if (!buf) buffers.set(table, buf = []);
        buf.push(row as unknown[]);
        rows++;
      }
      position = event.position;
      events++;
      if (++pending >= batchSize) await flush();
    }
    if (pending > 0) await flush();
    await committing;
  } finally {
    // A read that fails mid-way still leaves the connection idle when this returns.
    await committing.catch(() => {});
  }
  return Object.freeze({ kind: "catch-up", from, to: position, events, rows });
}

/**
 * Drops the projection and projects the whole log again from position 1.
 *
 * @example
 * ```ts
 * await rebuild(conn, store);
 * ```
 */
export async function rebuild(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
  options: { readonly batchSize?: number } = {},
): Promise<CatchUpResult> {
  await conn.run("DROP TABLE IF EXISTS projection_state");
  return await catchUp(conn, store, options);
}
