/**
 * A store on a read-only mount is readable: `verify`, `sql`, `report` and `export` work on it
 * (the projections go to a temporary file, the WAL store is read as immutable) and its folder is
 * byte-identical afterwards. File permissions do not bind root, so the test mounts the folder
 * read-only in a private mount namespace; it is skipped where mounts are not allowed.
 */
import assert from "node:assert/strict";
import {
  canMount,
  fingerprint,
  runCliOnReadOnlyMount,
  runsStore,
  withTempDir,
} from "./store-helpers.ts";

Deno.test({
  name: "a store on a read-only mount: verify, sql, report and export read it, nothing changes",
  ignore: !canMount,
  async fn() {
    await withTempDir(async (dir) => {
      const source = `${dir}/store`;
      const mount = `${dir}/mount`;
      await Deno.mkdir(source);
      await Deno.mkdir(mount);
      const { verified } = await runsStore(`${source}/events.sqlite`, ["run-a", "run-b"]);
      const before = await fingerprint(source);
      const store = `${mount}/events.sqlite`;
      const run = (script: string, ...args: string[]) =>
        runCliOnReadOnlyMount(source, mount, script, [...args, "--store", store]);

      const verify = await run("events/cli/verify.ts");
      assert.equal(verify.code, 0, verify.stderr);
      assert.match(verify.stdout, verified);

      const sql = await run(
        "analysis/cli/sql.ts",
        "SELECT run_id FROM runs ORDER BY 1",
        "--format",
        "csv",
      );
      assert.equal(sql.code, 0, sql.stderr);
      assert.equal(sql.stdout, "run_id\nrun-a\nrun-b\n");

      const report = await run("analysis/cli/report.ts", "--format", "json");
      assert.equal(report.code, 0, report.stderr);
      assert.ok(JSON.parse(report.stdout), report.stdout);

      const exported = await run("analysis/cli/export.ts", "run-a", "--out", `${dir}/export`);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stdout, /runs\.parquet\t1 rows/);

      assert.deepEqual(await fingerprint(source), before);
    });
  },
});
