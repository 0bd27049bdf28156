/**
 * `--out` never reaches an event store: every command that writes a path a user names (`sql`,
 * `report`, `export`, `export-model`, `study`, `docs`, `pretrain`), run as a user runs it, is
 * refused with exit 2 when that path is the store, one of its SQLite side files, in its blob
 * folder or its projections folder, whether it gets there relative to another directory, through
 * `..`, a symbolic link (to the store, to a folder above it, dangling to a side file not made
 * yet) or a hard link; an existing database is never overwritten either. Afterwards the store,
 * its blobs and projections are byte-identical, `verify` passes, and nothing was written where
 * the attacks aimed; ordinary outputs still work.
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { analysisPath } from "../../analysis/mod.ts";
import { storeFiles } from "../../events/cli/mod.ts";
import { openStore } from "../../events/mod.ts";
import { blobDirFor } from "../../events/store/sqlite-backend.ts";
import { attackedStore, fileDigests } from "./sql-files.ts";
import { smallStore } from "./store-helpers.ts";
import { denoRun, denoTask, type TaskResult } from "./task-run.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const REFUSED = /refused, nothing written: it (is|is in) /;

/** One attack: a task (or a script outside deno task), its arguments, where it runs from. */
interface Attack {
  readonly name: string;
  readonly run: () => Promise<TaskResult>;
  /** what the refusal says the path is */
  readonly reason: RegExp;
}

/** Runs `jobs` with at most `width` at a time, results in order. */
async function pool<T>(jobs: readonly (() => Promise<T>)[], width: number): Promise<T[]> {
  const results: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < jobs.length) {
      const i = next++;
      results[i] = await jobs[i]();
    }
  }));
  return results;
}

Deno.test("the guard names what the store's own code names: blobs and projections folders", () => {
  for (const target of ["/x/runs.sqlite", "/x/runs.db", "/x/runs", "/x/a.sqlite3"]) {
    const { files, folders } = storeFiles(target);
    assert.deepEqual(folders, [blobDirFor(target), analysisPath(target)]);
    assert.deepEqual(files, [target, `${target}-wal`, `${target}-shm`, `${target}-journal`]);
  }
  const url = "postgres://u:p@db/lab";
  assert.deepEqual(storeFiles(url).folders, [analysisPath(url)]);
});

Deno.test("every option that names a path a command writes is guarded (output: true)", async () => {
  const unguarded: string[] = [];
  for (const folder of ["analysis/cli", "engine/cli", "study/cli", "events/cli", "web/cli"]) {
    for await (const entry of Deno.readDir(join(ROOT, folder))) {
      if (!entry.name.endsWith(".ts")) continue;
      const text = await Deno.readTextFile(join(ROOT, folder, entry.name));
      for (
        const m of text.matchAll(/\n(\s+)"?(out|output|out-dir|output-dir)"?: \{([\s\S]*?)\n\1\}/g)
      ) {
        if (!/\boutput: true\b/.test(m[3])) unguarded.push(`${folder}/${entry.name} --${m[2]}`);
      }
    }
  }
  assert.deepEqual(unguarded, []);
});

Deno.test("--out that reaches a store, its blobs or its projections is refused by every command", async () => {
  await using store = await attackedStore();
  const work = await Deno.makeTempDir({ prefix: "polyrl-out-attack-" });
  try {
    const dir = store.dir;
    const storePath = store.path;
    // A blob, so the blob folder exists; then the projections, built by a first query.
    {
      const s = await openStore(storePath);
      await s.blobs.put(new TextEncoder().encode("checkpoint weights"));
      await s.close();
    }
    const warm = await denoTask(
      "sql",
      ["SELECT count(*) AS n FROM runs", "--store", storePath],
      dir,
    );
    assert.equal(warm.code, 0, warm.stderr);
    const before = await fileDigests(dir);
    // What verify says of the store (the fixture's checkpoints name blobs it never stored).
    const verified = await denoTask("verify", ["--store", storePath], work);
    assert.match(verified.stdout, /streams: 5 {2}events: \d+/, verified.stderr);
    const blobFile = Object.keys(before).find((f) => f.startsWith("events.blobs/"));
    const generation = Object.keys(before).find((f) => /^events\.analysis\/\d+\.duckdb$/.test(f));
    assert.ok(blobFile && generation, `blobs and projections exist: ${Object.keys(before)}`);

    // The attacker's links, in a folder of their own.
    const links = join(work, "links");
    await Deno.mkdir(links);
    await Deno.symlink(storePath, join(links, "store.csv"));
    await Deno.symlink(dir, join(links, "dir"));
    await Deno.symlink(`${storePath}-journal`, join(links, "journal.csv"));
    await Deno.symlink(join(dir, "events.analysis"), join(links, "analysis"));
    await Deno.link(storePath, join(links, "hard.csv"));
    await Deno.link(join(dir, blobFile), join(links, "blob-hard.bin"));
    // Another store the command was not given.
    const others = join(work, "others");
    await Deno.mkdir(others);
    await smallStore(join(others, "other.sqlite"));
    const othersBefore = await fileDigests(others);
    // A home whose default store (.polyrl/events.sqlite) is this store, through a link.
    const home = join(work, "home");
    await Deno.mkdir(home);
    await Deno.symlink(dir, join(home, ".polyrl"));

    const target = store.target;
    const s = ["--store", storePath];
    const sql = (out: string, cwd = target, extra: string[] = []) => () =>
      denoTask("sql", ["SELECT run_id FROM runs", ...s, ...extra, "--out", out], cwd);
    const attacks: Attack[] = [
      // deno task sql
      {
        name: "sql, relative from the store's folder",
        run: sql("events.sqlite", dir),
        reason: /the event store/,
      },
      { name: "sql, absolute", run: sql(storePath), reason: /is the event store/ },
      { name: "sql, -wal", run: sql(`${storePath}-wal`), reason: /the -wal file of/ },
      { name: "sql, -shm", run: sql(`${storePath}-shm`), reason: /the -shm file of/ },
      {
        name: "sql, -journal (not there yet)",
        run: sql(`${storePath}-journal`),
        reason: /-journal file/,
      },
      {
        name: "sql, symlink to the store",
        run: sql(join(links, "store.csv")),
        reason: /is the event store/,
      },
      {
        name: "sql, dangling symlink to -journal",
        run: sql(join(links, "journal.csv")),
        reason: /-journal file/,
      },
      {
        name: "sql, through a link to its folder",
        run: sql(join(links, "dir/events.sqlite")),
        reason: /is the event store/,
      },
      {
        name: "sql, .. path",
        run: sql(`../${basename(dir)}/events.sqlite`, target),
        reason: /is the event store/,
      },
      {
        name: "sql, hard link to the store",
        run: sql(join(links, "hard.csv")),
        reason: /hard link to the event store/,
      },
      {
        name: "sql, hard link to a blob",
        run: sql(join(links, "blob-hard.bin")),
        reason: /hard link into the blob folder/,
      },
      {
        name: "sql, in the blob folder",
        run: sql("events.blobs/x.csv", dir),
        reason: /in the blob folder/,
      },
      { name: "sql, a blob", run: sql(join(dir, blobFile)), reason: /in the blob folder/ },
      {
        name: "sql, in the projections",
        run: sql("events.analysis/x.csv", dir),
        reason: /in the projections folder/,
      },
      {
        name: "sql, a generation's .wal",
        run: sql(join(dir, `${generation}.wal`)),
        reason: /in the projections folder/,
      },
      {
        name: "sql, through a link to the projections",
        run: sql(join(links, "analysis/x.csv")),
        reason: /in the projections folder/,
      },
      {
        name: "sql --format parquet (DuckDB's COPY)",
        run: sql(storePath, target, ["--format", "parquet"]),
        reason: /is the event store/,
      },
      {
        name: "sql, another store's file",
        run: sql(join(others, "other.sqlite")),
        reason: /is an SQLite database/,
      },
      // deno task report
      {
        name: "report md",
        run: () => denoTask("report", [...s, "--out", "events.sqlite"], dir),
        reason: /is the event store/,
      },
      {
        name: "report json through a link",
        run: () =>
          denoTask("report", [...s, "--format", "json", "--out", join(links, "store.csv")], target),
        reason: /is the event store/,
      },
      {
        name: "report csv into the blobs",
        run: () =>
          denoTask("report", [...s, "--format", "csv", "--out", "events.blobs/tables"], dir),
        reason: /in the blob folder/,
      },
      {
        name: "report csv into the projections",
        run: () => denoTask("report", [...s, "--format", "csv", "--out", "events.analysis"], dir),
        reason: /in the projections folder/,
      },
      // deno task export
      {
        name: "export into the blobs",
        run: () => denoTask("export", ["latest", ...s, "--out", "events.blobs/export"], dir),
        reason: /in the blob folder/,
      },
      {
        name: "export into the projections",
        run: () =>
          denoTask(
            "export",
            ["latest", ...s, "--format", "csv", "--out", join(links, "analysis")],
            target,
          ),
        reason: /in the projections folder/,
      },
      // deno task export-model
      {
        name: "export-model into the blobs",
        run: () =>
          denoTask("export-model", [
            "latest",
            "--worker-group",
            "wg-solver",
            "--format",
            "peft",
            ...s,
            "--out",
            "events.blobs/adapter",
          ], dir),
        reason: /in the blob folder/,
      },
      // deno task study (its --store is the store it guards)
      {
        name: "study report into the projections",
        run: () =>
          denoTask("study", [
            ...s,
            "--report-only",
            "--from",
            join(ROOT, "docs/study/v2/study.json"),
            "--out",
            "events.analysis/report",
          ], dir),
        reason: /in the projections folder/,
      },
      // The default store, for commands that take no --store, and for those given none.
      {
        name: "docs over the default store",
        run: () => denoRun("engine/cli/docs.ts", ["--out", ".polyrl/events.sqlite"], home),
        reason: /is the event store/,
      },
      {
        name: "docs, the default store's -journal",
        run: () => denoRun("engine/cli/docs.ts", ["--out", ".polyrl/events.sqlite-journal"], home),
        reason: /-journal file/,
      },
      {
        name: "pretrain into the default store's blobs",
        run: () =>
          denoRun(
            "engine/cli/pretrain.ts",
            ["--steps", "0", "--out", ".polyrl/events.blobs/model"],
            home,
          ),
        reason: /in the blob folder/,
      },
      {
        name: "sql without --store, into the default projections",
        run: () =>
          denoRun(
            "analysis/cli/sql.ts",
            ["SELECT 1", "--out", ".polyrl/events.analysis/x.csv"],
            home,
          ),
        reason: /in the projections folder/,
      },
    ];
    const results = await pool(attacks.map((a) => a.run), 3);
    const wrong = attacks.flatMap((attack, i) => {
      const r = results[i];
      const refusal = r.stderr.split("\n").find((l) => l.startsWith("error: ")) ?? "";
      return r.code === 2 && REFUSED.test(refusal) && attack.reason.test(refusal)
        ? []
        : [`${attack.name}: exit ${r.code}: ${r.stderr.slice(-600)}`];
    });
    assert.deepEqual(wrong, [], wrong.join("\n\n"));

    // Ordinary outputs still work.
    const outputs = join(work, "outputs");
    const fine = await pool([
      () =>
        denoTask(
          "sql",
          ["SELECT run_id FROM runs", ...s, "--format", "csv", "--out", "runs.csv"],
          work,
        ),
      () => denoTask("export", ["latest", ...s, "--out", join(outputs, "export")], work),
      () => denoTask("report", [...s, "--format", "csv", "--out", join(outputs, "tables")], work),
    ], 3);
    for (const r of fine) assert.equal(r.code, 0, r.stderr);
    assert.match(await Deno.readTextFile(join(work, "runs.csv")), /^run_id\n/);
    assert.ok((await Deno.stat(join(outputs, "export/runs.parquet"))).isFile);
    assert.ok((await Deno.stat(join(outputs, "tables"))).isDirectory);

    assert.deepEqual(await fileDigests(dir), before, "store, blobs and projections unchanged");
    assert.deepEqual(await fileDigests(target), {}, "nothing written where attacks aimed");
    assert.deepEqual(await fileDigests(others), othersBefore, "the other store unchanged");
    for (const link of ["store.csv", "dir", "journal.csv", "analysis"]) {
      assert.ok((await Deno.lstat(join(links, link))).isSymlink, `${link} is still a link`);
    }
    await assert.rejects(Deno.lstat(`${storePath}-journal`), Deno.errors.NotFound);
    const verify = await denoTask("verify", s, work);
    assert.deepEqual([verify.code, verify.stdout], [verified.code, verified.stdout], verify.stderr);
  } finally {
    await Deno.remove(work, { recursive: true });
  }
});
