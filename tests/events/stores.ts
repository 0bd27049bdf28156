/**
 * The stores the shared suite runs against: a fresh SQLite file in a temp dir, and a fresh schema
 * on the Postgres server at POLYRL_TEST_POSTGRES_URL (tests ignored when it is unset).
 */
import pg from "pg";
import { type EventStore, type NewEvent, openStore } from "../../events/mod.ts";

/** Postgres server for tests, when configured. */
export const POSTGRES_URL = Deno.env.get("POLYRL_TEST_POSTGRES_URL");

/** Whether `schema` exists on the test Postgres server (a refused open must not create it). */
export async function postgresSchemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
    return found.rowCount !== 0;
  } finally {
    await client.end();
  }
}

/** A store target that lives as long as the returned `dispose`. */
export interface StoreTarget {
  readonly target: string;
  dispose(): Promise<void>;
}

/** A fresh SQLite file path. */
export async function sqliteTarget(): Promise<StoreTarget> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-events-" });
  return {
    target: `${dir}/events.sqlite`,
    dispose: () => Deno.remove(dir, { recursive: true }),
  };
}

/** A fresh Postgres schema, dropped on dispose. */
export function postgresTarget(): Promise<StoreTarget> {
  if (!POSTGRES_URL) throw new Error("POLYRL_TEST_POSTGRES_URL is unset");
  const schema = `polyrl_test_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
  const url = new URL(POSTGRES_URL);
  url.searchParams.set("schema", schema);
  return Promise.resolve({
    target: url.toString(),
    async dispose() {
      const { default: pg } = await import("pg");
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  });
}

/** The store kinds, with whether this machine can run them. */
export const storeKinds = [
  { kind: "sqlite", make: sqliteTarget, ignore: false },
  { kind: "postgres", make: postgresTarget, ignore: !POSTGRES_URL },
] as const;

/** Runs `fn` with a fresh store of `make`'s kind, disposing of everything afterwards. */
export async function withStore(
  make: () => Promise<StoreTarget>,
  fn: (store: EventStore<NewEvent>, target: string) => Promise<void>,
): Promise<void> {
  const t = await make();
  try {
    const store = await openStore(t.target);
    try {
      await fn(store, t.target);
    } finally {
      await store.close();
    }
  } finally {
    await t.dispose();
  }
}

/** Every event of the log, as [position, stream, version, id] tuples. */
export async function snapshot(store: EventStore<NewEvent>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of store.readAll()) {
    out.push(`${e.position} ${e.stream} ${e.version} ${e.id} ${e.hash}`);
  }
  return out;
}
