import type { DuckDBInstance } from "@duckdb/node-api";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type TransactionSettings,
} from "kysely";
import type { BigintMode } from "./duckdb-values.ts";
import { DuckDBKyselyConnection } from "./duckdb-connection.ts";

/**
 * Hands out DuckDB connections from one instance. DuckDB connections are cheap and a
 * transaction is bound to its connection, so idle ones are pooled and reused rather than shared.
 */
export class DuckDBDriver implements Driver {
  readonly #idle: DuckDBKyselyConnection[] = [];
  readonly #all: DuckDBKyselyConnection[] = [];

  constructor(private readonly instance: DuckDBInstance, private readonly bigint: BigintMode) {}

  init(): Promise<void> {
    return Promise.resolve();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const idle = this.#idle.pop();
    if (idle) return idle;
    const conn = new DuckDBKyselyConnection(await this.instance.connect(), this.bigint);
    this.#all.push(conn);
    return conn;
  }

  async beginTransaction(conn: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (settings.isolationLevel || settings.accessMode) {
      // DuckDB runs every transaction as snapshot isolation and has no per-transaction mode.
      throw new Error(
        `DuckDB does not take transaction settings (got ${JSON.stringify(settings)}); omit them`,
      );
    }
    await conn.executeQuery(CompiledQuery.raw("BEGIN TRANSACTION"));
  }

  async commitTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("COMMIT"));
  }

  async rollbackTransaction(conn: DatabaseConnection): Promise<void> {
    await conn.executeQuery(CompiledQuery.raw("ROLLBACK"));
  }

  releaseConnection(conn: DatabaseConnection): Promise<void> {
    this.#idle.push(conn as DuckDBKyselyConnection);
    return Promise.resolve();
  }

  destroy(): Promise<void> {
    for (const conn of this.#all) conn.native.closeSync();
    this.#all.length = 0;
    this.#idle.length = 0;
    return Promise.resolve();
  }
}
