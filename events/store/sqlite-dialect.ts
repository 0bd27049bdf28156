/**
 * Kysely over `node:sqlite`: Kysely's own SqliteDialect expects better-sqlite3's statement shape
 * (`reader`, array parameters); this adapts a `DatabaseSync` to it, so migrations and the
 * table-backed blob store run unchanged on the embedded store.
 *
 * @example
 * ```ts
 * import { Kysely } from "kysely";
 * import { DatabaseSync } from "node:sqlite";
 * import type { LogDatabase } from "./schema.ts";
 * import { nodeSqliteDialect } from "./sqlite-dialect.ts";
 *
 * const path = ".polyrl/events.sqlite";
 * const db = new Kysely<LogDatabase>({ dialect: nodeSqliteDialect(new DatabaseSync(path)) });
 * ```
 */
import type { DatabaseSync, SQLInputValue } from "node:sqlite";
import { SqliteDialect, type SqliteStatement } from "kysely";

/** A Kysely dialect over an open `node:sqlite` database; `destroy()` closes it. */
export function nodeSqliteDialect(database: DatabaseSync): SqliteDialect {
  return new SqliteDialect({
    database: {
      close: () => database.close(),
      prepare(sqlText: string): SqliteStatement {
        const stmt = database.prepare(sqlText);
        const params = (p: readonly unknown[]) => p as SQLInputValue[];
        return {
          reader: stmt.columns().length > 0,
          all: (p) => stmt.all(...params(p)),
          run: (p) => stmt.run(...params(p)),
          iterate: (p) => stmt.iterate(...params(p)),
        };
      },
    },
  });
}
