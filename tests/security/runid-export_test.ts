/**
 * `deno task export` of runs whose stored ids are hostile (written behind the CLI's back, or by
 * older code): the default folder is a safe name inside the working directory, never a path the
 * id steers elsewhere.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { openStore, runIdSlug } from "../../events/mod.ts";
import { runStartedEvent, stepEvent } from "../events/sample-events.ts";

const EXPORT = new URL("../../analysis/cli/export.ts", import.meta.url).pathname;

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test("export of a hostile-id run writes only inside the working directory", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const cwd = join(tmp, "w1", "w2", "w3");
    await Deno.mkdir(cwd, { recursive: true });
    const path = join(cwd, "events.sqlite");
    const hostile = ["a/../../../elsewhere", "../../../../up"];
    {
      await using store = await openStore(path);
      for (const i of [0, 1]) await store.append(`plain-${i}`, [runStartedEvent(), stepEvent(0)]);
    }
    // Renamed behind the store's back: no check on the way in can have seen these ids.
    const db = new DatabaseSync(path);
    hostile.forEach((id, i) => {
      for (const table of ["events", "streams"]) {
        db.prepare(`UPDATE ${table} SET stream = ? WHERE stream = ?`).run(id, `plain-${i}`);
      }
    });
    db.close();
    for (const [arg, id] of [[hostile[0], hostile[0]], ["latest", hostile[1]]]) {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", EXPORT, arg, "--store", path, "--format", "csv"],
        cwd,
        stdout: "piped",
        stderr: "piped",
        env: { NO_COLOR: "1" },
      }).output();
      const stdout = new TextDecoder().decode(out.stdout);
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      const folder = `export-${runIdSlug(id)}`;
      const files = stdout.trim().split("\n").map((line) => line.split("\t")[0]);
      assert.ok(files.length > 0);
      for (const f of files) assert.ok(f.startsWith(`${folder}/`), f);
      assert.ok((await entries(join(cwd, folder))).length === files.length);
    }
    // Nothing appeared above the working directory.
    assert.deepEqual(await entries(tmp), ["w1"]);
    assert.deepEqual(await entries(join(tmp, "w1")), ["w2"]);
    assert.deepEqual(await entries(join(tmp, "w1", "w2")), ["w3"]);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
