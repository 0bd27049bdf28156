/**
 * Kysely's Postgres dialect with its introspection confined to one schema: the store's, which is
 * all its migrator needs to look at (whether its migration tables exist yet).
 *
 * Why: Kysely's PostgresIntrospector lists every column of every table in the database and
 * resolves each table by name (`pg_get_serial_sequence`), so a table dropped in another schema
 * between its catalogue scan and that lookup fails the store's open with `relation "…" does not
 * exist`. Other schemas of a lab's database come and go all the time (rollout workers' pg-boss
 * queues, other runs' stores); CI saw it while the workers tests dropped theirs, and
 * tests/events/postgres-ddl-race_test.ts provokes it. Listing one schema's tables from the
 * catalogue by namespace resolves no name, and does not grow with the rest of the database.
 */
import {
  type DatabaseIntrospector,
  type Kysely,
  PostgresDialect,
  type PostgresDialectConfig,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from "kysely";

/** The tables and views of one schema, without their columns (no caller here reads them). */
class SchemaIntrospector implements DatabaseIntrospector {
  // deno-lint-ignore no-explicit-any -- Kysely's own introspectors take any database
  constructor(private readonly db: Kysely<any>, private readonly schema: string) {}

  getSchemas(): Promise<SchemaMetadata[]> {
    return Promise.resolve([{ name: this.schema }]);
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ name: string; kind: string }>`
      SELECT c.relname AS name, c.relkind AS kind
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = ${this.schema} AND c.relkind IN ('r', 'p', 'v', 'f')
      ORDER BY c.relname`.execute(this.db);
    return rows.map((r) => ({
      name: r.name,
      schema: this.schema,
      isView: r.kind === "v",
      isForeign: r.kind === "f",
      columns: [],
    }));
  }
}

/**
 * A PostgresDialect whose `db.introspection` sees only `schema`.
 *
 * @example
 * ```ts
 * import { Kysely } from "kysely";
 * import pg from "pg";
 * import { SchemaScopedPostgresDialect } from "./postgres-schema-dialect.ts";
 *
 * declare const pool: pg.Pool;
 * const db = new Kysely({ dialect: new SchemaScopedPostgresDialect({ pool }, "lab") });
 * await db.introspection.getTables(); // the tables of schema lab only
 * ```
 */
export class SchemaScopedPostgresDialect extends PostgresDialect {
  constructor(config: PostgresDialectConfig, private readonly schema: string) {
    super(config);
  }

  // deno-lint-ignore no-explicit-any -- the signature of Dialect.createIntrospector
  override createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.schema);
  }
}
