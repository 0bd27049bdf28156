/**
 * The read-only commands as a user runs them, on paths that are not event stores: each exits 1
 * with one error line naming the problem, and leaves every file byte-identical and no file or
 * folder created (sha256 of everything under the test's folder before and after). Also: a typo'd
 * path given to `replay` or `train --resume` creates nothing, and `sql` answers for the store at
 * the path now, not for one that was there before (`--rebuild` rebuilds on demand).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  type CliResult,
  errorLines,
  fingerprint,
  foreignDatabase,
  runCli,
  smallStore,
  withTempDir,
} from "./store-helpers.ts";
import { POSTGRES_URL, postgresSchemaExists, postgresTarget } from "../events/stores.ts";

const READERS: readonly (readonly [string, readonly string[]])[] = [
  ["events/cli/verify.ts", []],
  ["analysis/cli/sql.ts", ["SELECT 1"]],
  ["analysis/cli/report.ts", []],
  ["analysis/cli/export.ts", ["latest"]],
  ["engine/cli/replay.ts", ["latest"]],
];

function assertOneError(result: CliResult, pattern: RegExp, what: string): void {
  assert.equal(result.code, 1, `${what}: ${result.stderr}`);
  const lines = errorLines(result);
  assert.equal(lines.length, 1, `${what}: ${result.stderr}`);
  assert.match(lines[0], pattern, what);
}

Deno.test("read-only commands on a zero-byte file: exit 1, one line, file untouched", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await Deno.writeFile(path, new Uint8Array());
    const before = await fingerprint(dir);
    for (const [script, args] of READERS) {
      const result = await runCli(script, [...args, "--store", path]);
      assertOneError(
        result,
        /^error: .*events\.sqlite is not a polyrl event store \(an empty file, no events table\); /,
        script,
      );
      assert.deepEqual(await fingerprint(dir), before, script);
    }
  });
});

Deno.test("read-only commands on another application's SQLite file: refused untouched", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/app.db`;
    foreignDatabase(path);
    const before = await fingerprint(dir);
    for (const [script, args] of READERS) {
      const result = await runCli(script, [...args, "--store", path]);
      assertOneError(
        result,
        /^error: .*app\.db is not a polyrl event store \(no events table; it holds notes\); /,
        script,
      );
      assert.deepEqual(await fingerprint(dir), before, script);
    }
  });
});

Deno.test("a typo'd path to a read-only command, replay or train --resume creates nothing", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/typo/runs/events.sqlite`;
    const commands: (readonly [string, readonly string[]])[] = [
      ...READERS,
      ["engine/cli/train.ts", ["--resume", "run-x"]],
    ];
    for (const [script, args] of commands) {
      const result = await runCli(script, [...args, "--store", path]);
      assertOneError(
        result,
        /^error: no event store at .* \(no such file\); check --store/,
        script,
      );
      assert.deepEqual(await fingerprint(dir), {}, script);
    }
  });
});

Deno.test("verify on a store from newer code and on a truncated store: one clear line", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    await smallStore(path);
    const bytes = await Deno.readFile(path);
    const db = new DatabaseSync(path);
    db.exec("INSERT INTO kysely_migration VALUES ('0099_future', '2030-01-01T00:00:00.000Z')");
    db.close();
    assertOneError(
      await runCli("events/cli/verify.ts", ["--store", path]),
      /^error: event store .*: store schema version 99 is newer than this code's 3; upgrade polyrl$/,
      "newer",
    );
    await Deno.writeFile(path, bytes.subarray(0, Math.floor(bytes.length / 2)));
    assertOneError(
      await runCli("events/cli/verify.ts", ["--store", path]),
      /^error: event store .* is damaged: truncated: .*; restore it from a backup/,
      "truncated",
    );
  });
});

Deno.test("sql answers for the store now at the path; --rebuild rebuilds", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/events.sqlite`;
    const runs = async (...extra: string[]) => {
      const result = await runCli("analysis/cli/sql.ts", [
        "SELECT stream FROM (SELECT DISTINCT run_id AS stream FROM steps) ORDER BY 1",
        "--format",
        "csv",
        "--store",
        path,
        ...extra,
      ]);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout.trim().split("\n").slice(1);
    };
    await smallStore(path, ["run-a"]);
    assert.deepEqual(await runs(), ["run-a"]);
    await Deno.remove(path);
    await smallStore(path, ["run-b", "run-c"]);
    assert.deepEqual(await runs(), ["run-b", "run-c"]);
    assert.deepEqual(await runs("--rebuild"), ["run-b", "run-c"]);
  });
});

Deno.test({
  name: "verify on a Postgres schema that does not exist: exit 1, schema not created",
  ignore: !POSTGRES_URL,
  async fn() {
    const { target, dispose } = await postgresTarget();
    const schema = new URL(target).searchParams.get("schema")!;
    try {
      assertOneError(
        await runCli("events/cli/verify.ts", ["--store", target]),
        new RegExp(`^error: no event store at .* \\(schema ${schema} does not exist\\)`),
        "verify",
      );
      assert.equal(await postgresSchemaExists(schema), false);
    } finally {
      await dispose();
    }
  },
});
