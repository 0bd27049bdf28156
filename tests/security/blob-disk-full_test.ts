/**
 * A training run whose disk fills up: `deno task train` on a store on a 400 KiB tmpfs stops with
 * "No space left on device" while writing a checkpoint blob, and leaves no `.tmp` file in the
 * blob folder (the partial copy is removed), and a store `verify` finds intact, byte-identical
 * after it. The tmpfs is mounted in a private mount namespace (root and `unshare`); the test is
 * skipped where mounts are not allowed.
 */
import assert from "node:assert/strict";
import { canMount, fingerprint, runCli, runCommand, withTempDir } from "./store-helpers.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test({
  name: "a disk-full stop leaves no temporary blob file, and a store verify finds intact",
  ignore: !canMount,
  async fn() {
    await withTempDir(async (dir) => {
      const mount = `${dir}/full`;
      const kept = `${dir}/kept`;
      await Deno.mkdir(mount);
      await Deno.mkdir(kept);
      const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
      const train = [Deno.execPath(), "run", "-A", `${ROOT}engine/cli/train.ts`, "--preset"]
        .concat(["smoke", "--steps", "2", "--device", "cpu", "--run-id", "full"])
        .concat(["--store", `${mount}/events.sqlite`]);
      // The store lives only in the namespace: what the run left is copied out before it ends.
      const script = [
        `mount -t tmpfs -o size=400k tmpfs ${quote(mount)}`,
        `${train.map(quote).join(" ")}; code=$?`,
        `cp -a ${quote(mount)}/. ${quote(kept)}`,
        "exit $code",
      ].join(" && ");
      const run = await runCommand("unshare", ["-m", "sh", "-c", script]);
      assert.equal(run.code, 1, run.stderr);
      assert.match(run.stderr, /No space left on device \(os error 28\).*events\.blobs/);

      const files = Object.keys(await fingerprint(kept));
      assert.ok(files.includes("events.sqlite"), files.join(", "));
      assert.ok(files.some((f) => f.startsWith("events.blobs/")), files.join(", "));
      assert.deepEqual(files.filter((f) => f.endsWith(".tmp")), [], "no temporary blob file");

      // SQLite gives any reader of a WAL database its -wal and -shm side files; the store's own
      // file and blobs are what must not change.
      const storeFiles = async () =>
        Object.fromEntries(
          Object.entries(await fingerprint(kept)).filter(([f]) => !/-(wal|shm)$/.test(f)),
        );
      const before = await storeFiles();
      const verify = await runCli("events/cli/verify.ts", [
        "--store",
        `${kept}/events.sqlite`,
      ]);
      assert.equal(verify.code, 0, verify.stdout + verify.stderr);
      assert.match(verify.stdout, /ok: /);
      assert.deepEqual(await storeFiles(), before, "verify leaves the store byte-identical");
    });
  },
});
