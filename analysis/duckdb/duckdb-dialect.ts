import type { DuckDBInstance } from "@duckdb/node-api";
import type {
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
} from "kysely";
import { DuckDBAdapter } from "./duckdb-adapter.ts";
import { DuckDBDriver } from "./duckdb-driver.ts";
import { DuckDBIntrospector } from "./duckdb-introspector.ts";
import { DuckDBQueryCompiler } from "./duckdb-query-compiler.ts";
import type { BigintMode } from "./duckdb-values.ts";

/** Options of the DuckDB dialect. The caller owns (opens and closes) the instance. */
export interface DuckDBDialectConfig {
  readonly instance: DuckDBInstance;
  /** BIGINT/HUGEINT results as checked numbers (default) or as bigint. */
  readonly bigint?: BigintMode;
}

/**
 * Kysely dialect over @duckdb/node-api, written because kysely-duckdb 0.4.0 fails on
 * kysely 0.29 and misreads count(*).
 *
 * @example
 * ```ts
 * import { DuckDBInstance } from "@duckdb/node-api";
 * import { Kysely } from "kysely";
 * import { DuckDBDialect } from "./duckdb-dialect.ts";
 * interface Tables {
 *   runs: { run_id: string };
 * }
 *
 * const instance = await DuckDBInstance.create(":memory:");
 * const db = new Kysely<Tables>({ dialect: new DuckDBDialect({ instance }) });
 * const { n } = await db.selectFrom("runs").select((eb) => eb.fn.countAll<number>().as("n"))
 *   .executeTakeFirstOrThrow();
 * ```
 */
export class DuckDBDialect implements Dialect {
  constructor(private readonly config: DuckDBDialectConfig) {}

  createDriver(): Driver {
    return new DuckDBDriver(this.config.instance, this.config.bigint ?? "number");
  }

  createQueryCompiler(): QueryCompiler {
    return new DuckDBQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new DuckDBAdapter();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new DuckDBIntrospector(db);
  }
}
