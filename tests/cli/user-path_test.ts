/**
 * Relative paths on a task's command line mean the directory the user ran `deno task` from, not
 * the repository root where deno task runs the command: the tasks are run from a scratch folder
 * through `deno task --config ROOT/deno.json`, as a user in a subdirectory would.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openStore } from "../../events/mod.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CONFIG = join(ROOT, "deno.json");

async function task(cwd: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "-q", "--config", CONFIG, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test("--store, --out and a FILE argument resolve against the user's directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-user-path-" });
  const sub = join(dir, "work", "here");
  await Deno.mkdir(sub, { recursive: true });
  try {
    await (await openStore(join(sub, "runs.sqlite"))).close();

    const verify = await task(sub, "verify", "--store", "runs.sqlite", "--format", "json");
    assert.equal(verify.code, 0, verify.stderr);
    assert.equal(JSON.parse(verify.stdout).ok, true);

    const out = "answer.csv";
    const sql = await task(
      sub,
      "sql",
      "SELECT 42 AS answer",
      "--store",
      "runs.sqlite",
      "--format",
      "csv",
      "--out",
      out,
    );
    assert.equal(sql.code, 0, sql.stderr);
    assert.equal((await Deno.readTextFile(join(sub, out))).trim(), "answer\n42");
    assert.equal(await exists(join(ROOT, out)), false, "nothing written in the repository root");

    await Deno.writeTextFile(
      join(sub, "pairs.jsonl"),
      JSON.stringify({ gold: "1/2", pred: "0.5" }),
    );
    const grade = await task(sub, "grade", "pairs.jsonl");
    assert.equal(grade.code, 0, grade.stderr);
    assert.equal(JSON.parse(grade.stdout).equivalent, true);

    // Files that do not exist are named in full, in the user's directory: what was looked up.
    const config = await task(sub, "train", "--config", "missing.json", "--store", "runs.sqlite");
    assert.notEqual(config.code, 0);
    assert.match(config.stderr, new RegExp(`${sub}/missing\\.json`));
    const data = await task(
      sub,
      "eval",
      "--model",
      "embedded",
      "--data",
      "nope.jsonl",
      "--store",
      "runs.sqlite",
    );
    assert.notEqual(data.code, 0);
    assert.match(data.stderr, new RegExp(`--data ${sub}/nope\\.jsonl`));

    // The same relative store from another directory is another (missing) file, named in full.
    const elsewhere = await task(dir, "verify", "--store", "runs.sqlite");
    assert.notEqual(elsewhere.code, 0);
    assert.match(elsewhere.stderr, new RegExp(`${dir}/runs\\.sqlite`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a path given as absolute or a postgres URL is left as typed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-user-path-" });
  try {
    const store = join(dir, "abs.sqlite");
    await (await openStore(store)).close();
    const other = join(dir, "other");
    await Deno.mkdir(other);
    const verify = await task(other, "verify", "--store", store);
    assert.equal(verify.code, 0, verify.stderr);
    const pg = await task(dir, "verify", "--store", "postgres://127.0.0.1:1/none");
    assert.notEqual(pg.code, 0);
    assert.match(pg.stderr, /postgres:\/\/127\.0\.0\.1:1\/none/, "the URL is not made a path");
    assert.doesNotMatch(pg.stderr, new RegExp(`${dir}/postgres:`));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the user's directory is read once: child processes get paths already resolved", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-user-path-" });
  try {
    const script = join(dir, "probe.ts");
    const helper = new URL("../../events/cli/user-path.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { userPath } from ${JSON.stringify(helper)};
const child = await new Deno.Command(Deno.execPath(), {
  args: ["eval", "console.log(Deno.env.get('INIT_CWD') ?? 'unset')"],
  stdout: "piped",
}).output();
console.log(JSON.stringify({
  relative: userPath("a/b.sqlite"),
  absolute: userPath("/x/y.sqlite"),
  url: userPath("postgres://h/db"),
  stdio: userPath("-"),
  child: new TextDecoder().decode(child.stdout).trim(),
}));`,
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script],
      cwd: ROOT,
      env: { INIT_CWD: "/somewhere/else" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
      relative: "/somewhere/else/a/b.sqlite",
      absolute: "/x/y.sqlite",
      url: "postgres://h/db",
      stdio: "-",
      child: "unset",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
