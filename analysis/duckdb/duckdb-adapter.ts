import { DialectAdapterBase, type Kysely } from "kysely";

/** What Kysely may assume of DuckDB: RETURNING and transactional DDL are supported. */
export class DuckDBAdapter extends DialectAdapterBase {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  override get supportsReturning(): boolean {
    return true;
  }

  // A DuckDB file is opened read-write by one process only, and the migrator runs in one
  // transaction on it, so no other writer can race a migration: the lock has nothing to do.
  async acquireMigrationLock(_db: Kysely<unknown>): Promise<void> {}

  async releaseMigrationLock(_db: Kysely<unknown>): Promise<void> {}
}
