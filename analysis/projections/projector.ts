import type { DuckDBConnection } from "@duckdb/node-api";
import type { EventStore, NewEvent } from "../../events/mod.ts";
import { appendRows } from "./append-rows.ts";
import { copyLeases } from "./copy-leases.ts";
import { eventRows } from "./event-rows.ts";
import { tableDdl } from "./define-table.ts";
import { SCHEMA_VERSION, STATE_DDL, VIEWS } from "./schema.ts";
import { type TableName, TABLES } from "./tables.ts";

const STATE = "analysis";

/** What one catch-up did: the positions it covered and how many events and rows it wrote. */
export interface CatchUpResult {
  readonly kind: "catch-up";
  /** Last position projected before, and after. */
  readonly from: number;
  readonly to: number;
  readonly events: number;
  readonly rows: number;
  /**
   * Why the projection was dropped and built again from position 1 (another store at the same
   * path, a rewritten event), or null when it continued where it was.
   */
  readonly rebuiltBecause: string | null;
}

/** The row of `projection_state`, as this code's schema version writes it. */
export interface ProjectionState {
  readonly position: number;
  readonly storeId: string | null;
  readonly positionHash: string | null;
}

/**
 * The projection's state, or null where it was built by another schema version. Reads only, so it
 * works on a projection opened READ_ONLY.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { readState } from "./projector.ts";
 * declare const conn: DuckDBConnection;
 * declare const store: EventStore<NewEvent>;
 *
 * const state = await readState(conn);
 * const upToDate = state?.position === await store.lastPosition();
 * ```
 */
export async function readState(conn: DuckDBConnection): Promise<ProjectionState | null> {
  const rows = (await conn.runAndReadAll(
    "SELECT * FROM projection_state WHERE name = $1",
    [STATE],
  )).getRowObjectsJS();
  if (rows.length === 0 || Number(rows[0].schema_version) !== SCHEMA_VERSION) return null;
  return {
    position: Number(rows[0].position),
    storeId: (rows[0].store_id ?? null) as string | null,
    positionHash: (rows[0].position_hash ?? null) as string | null,
  };
}

/**
 * Why the projection in `conn` cannot be continued from `store`, or null when it can (or when
 * there is none of this schema version, which `ensureSchema` replaces anyway).
 */
async function mismatch(conn: DuckDBConnection, store: EventStore<NewEvent>) {
  await conn.run(STATE_DDL);
  const state = await readState(conn);
  if (state === null) return null;
  if (state.storeId !== store.storeId) {
    return `the projections were built from another store (id ${state.storeId ?? "none"}; ` +
      `${store.target} has ${store.storeId ?? "none"})`;
  }
  if (state.position === 0) return null;
  const hash = await store.eventHash(state.position);
  if (hash === state.positionHash) return null;
  return hash === undefined
    ? `the store ends before position ${state.position}, the last one projected`
    : `the event at position ${state.position} is not the one projected there`;
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
  const state = await readState(conn);
  if (state !== null) return state.position;
  await conn.run("BEGIN TRANSACTION");
  try {
    await dropAll(conn);
    await conn.run(STATE_DDL);
    for (const spec of Object.values(TABLES)) await conn.run(tableDdl(spec));
    for (const [, ddl] of VIEWS) await conn.run(ddl);
    await conn.run("INSERT INTO projection_state VALUES ($1, 0, $2, NULL, NULL)", [
      STATE,
      SCHEMA_VERSION,
    ]);
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
 * waits for the commit before it opens its transaction. A projection built from another store
 * (its id differs) or from other events (the hash at its last position differs) is dropped and
 * built again from position 1. The store's writer leases, which are no events, are copied afresh
 * each time (see copy-leases.ts).
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { catchUp } from "./projector.ts";
 * declare const conn: DuckDBConnection;
 * declare const store: EventStore<NewEvent>;
 *
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
  const rebuiltBecause = await mismatch(conn, store);
  if (rebuiltBecause !== null) await conn.run("DROP TABLE projection_state");
  const from = await ensureSchema(conn);
  if (from === 0) {
    await conn.run("UPDATE projection_state SET store_id = $1 WHERE name = $2", [
      store.storeId,
      STATE,
    ]);
  }
  let position = from;
  let hash: string | null = null;
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
      await conn.run(
        "UPDATE projection_state SET position = $1, position_hash = $2 WHERE name = $3",
        [position, hash, STATE],
      );
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
      hash = event.hash;
      events++;
      if (++pending >= batchSize) await flush();
    }
    if (pending > 0) await flush();
    await committing;
    await copyLeases(conn, store);
  } finally {
    // A read that fails mid-way still leaves the connection idle when this returns.
    await committing.catch(() => {});
  }
  return Object.freeze({ kind: "catch-up", from, to: position, events, rows, rebuiltBecause });
}

/**
 * Drops the projection and projects the whole log again from position 1.
 *
 * @example
 * ```ts
 * import type { DuckDBConnection } from "@duckdb/node-api";
 * import type { EventStore, NewEvent } from "../../events/mod.ts";
 * import { rebuild } from "./projector.ts";
 * declare const conn: DuckDBConnection;
 * declare const store: EventStore<NewEvent>;
 *
 * await rebuild(conn, store);
 * ```
 */
export async function rebuild(
  conn: DuckDBConnection,
  store: EventStore<NewEvent>,
  options: { readonly batchSize?: number } = {},
): Promise<CatchUpResult> {
  await conn.run("DROP TABLE IF EXISTS projection_state");
  const result = await catchUp(conn, store, options);
  return Object.freeze({ ...result, rebuiltBecause: "a rebuild was asked for" });
}
