/**
 * Files a user names are read only when they are regular files within a size limit, and an error
 * never quotes their contents: a config, tasks or grade file or a model's JSON linked to /dev/zero (which
 * grew memory without bound), an oversized tasks file, and inside an adapter folder that
 * `deno task serve` loads, a FIFO as the weights (the load never answered) or a link to
 * /etc/passwd as the config (its first line reached the client). Each runs the real command and
 * must end within a deadline.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { writeAdapter } from "../serve/adapter-files.ts";
import { startServe } from "../serve/server-process.ts";
import { randomModel, tinyConfigInput } from "../replay/tiny-run.ts";
import { fingerprint, runCommand, smallStore } from "./store-helpers.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
/** Long enough for a loaded machine to start Deno; the unbounded reads never end. */
const DEADLINE_MS = 60_000;

/** Runs `deno run -A script ...args` in the repository, killed at the deadline. */
async function runBounded(script: string, ...args: string[]) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGKILL"), DEADLINE_MS);
  const out = await child.output();
  clearTimeout(timer);
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

Deno.test("a tasks file that is a device or too large: exit 2 naming it, the store untouched", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bounded-tasks-" });
  const store = join(tmp, "store");
  await Deno.mkdir(store);
  await smallStore(join(store, "events.sqlite"));
  const before = await fingerprint(store);
  const train = async (tasks: string) => {
    const config = join(tmp, "config.json");
    const input = tinyConfigInput("embedded", join(store, "events.sqlite"), 1) as object;
    await Deno.writeTextFile(
      config,
      JSON.stringify({ ...input, tasks: { kind: "math-files", train: tasks } }),
    );
    return await runBounded("engine/cli/train.ts", "--config", config, "--run-id", "bounded");
  };

  await Deno.symlink("/dev/zero", join(tmp, "zero.jsonl"));
  const zero = await train(join(tmp, "zero.jsonl"));
  assert.equal(zero.code, 2, zero.stderr);
  assert.match(zero.stderr, /zero\.jsonl is a device, not a regular file; give a regular file/);

  // A sparse file: 300 MiB on paper, nothing on disk.
  const big = join(tmp, "big.jsonl");
  await Deno.writeTextFile(big, "");
  await Deno.truncate(big, 300 * 1024 * 1024);
  const large = await train(big);
  assert.equal(large.code, 2, large.stderr);
  assert.match(large.stderr, /big\.jsonl is 300 MiB, over the 256 MiB limit on this file/);

  assert.deepEqual(await fingerprint(store), before, "the store is byte-identical");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("a config file that is /dev/zero: train exits 2 naming it, no store made", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bounded-config-" });
  await Deno.symlink("/dev/zero", join(tmp, "config.json"));
  const store = join(tmp, "events.sqlite");
  const train = await runBounded(
    "engine/cli/train.ts",
    "--config",
    join(tmp, "config.json"),
    "--store",
    store,
  );
  assert.equal(train.code, 2, train.stderr);
  assert.match(train.stderr, /config\.json is a device, not a regular file/);
  const names = await Array.fromAsync(Deno.readDir(tmp), (e) => e.name);
  assert.deepEqual(names, ["config.json"], "nothing was created");
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("a grade batch that is /dev/zero: exit 2 naming it", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bounded-grade-" });
  await Deno.symlink("/dev/zero", join(tmp, "pairs.jsonl"));
  const grade = await runBounded("engine/cli/grade.ts", join(tmp, "pairs.jsonl"));
  assert.equal(grade.code, 2, grade.stderr);
  assert.match(grade.stderr, /pairs\.jsonl is a device, not a regular file/);
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("a model whose config.json or tokenizer.json is /dev/zero: serve refuses it", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bounded-model-" });
  const model = await randomModel(tmp);
  for (const file of ["config.json", "tokenizer.json"]) {
    const saved = join(tmp, file);
    await Deno.rename(join(model, file), saved);
    await Deno.symlink("/dev/zero", join(model, file));
    const serve = await runBounded("engine/cli/serve.ts", "--model", model, "--port", "0");
    assert.notEqual(serve.code, 0, serve.stdout);
    assert.match(
      serve.stderr,
      new RegExp(
        `${file.replace(".", "\\.")}: (field \\(root\\) )?is a device, not a regular file`,
      ),
    );
    await Deno.remove(join(model, file));
    await Deno.rename(saved, join(model, file));
  }
  await Deno.remove(tmp, { recursive: true });
});

Deno.test("serve reads only regular files inside an adapter folder, and quotes none", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "polyrl-bounded-adapters-" });
  const adapters = join(tmp, "adapters");
  const good = join(adapters, "good");
  await writeAdapter(good, { rank: 4, targets: ["q_proj"] });
  const fifo = join(adapters, "fifo");
  await writeAdapter(fifo, { rank: 4, targets: ["q_proj"] });
  await Deno.remove(join(fifo, "adapter_model.safetensors"));
  assert.equal((await runCommand("mkfifo", [join(fifo, "adapter_model.safetensors")])).code, 0);
  const passwd = join(adapters, "passwd");
  await Deno.mkdir(passwd);
  await Deno.symlink("/etc/passwd", join(passwd, "adapter_config.json"));
  // Links to a real adapter's own files are refused too: a link may lead anywhere.
  const linked = join(adapters, "linked");
  await Deno.mkdir(linked);
  await Deno.copyFile(join(good, "adapter_config.json"), join(linked, "adapter_config.json"));
  await Deno.symlink(
    join(good, "adapter_model.safetensors"),
    join(linked, "adapter_model.safetensors"),
  );

  await using server = await startServe("--model", "embedded", "--lora-dir", adapters);
  const load = async (name: string, path: string) => {
    const res = await fetch(`${server.url}/v1/load_lora_adapter`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ lora_name: name, lora_path: path }),
      signal: AbortSignal.timeout(DEADLINE_MS / 2),
    });
    return { status: res.status, text: await res.text() };
  };
  const fromFifo = await load("fifo", fifo).catch(async (err) => {
    // A server that opened the FIFO waits there for a writer: give it one so that it can stop.
    (await Deno.open(join(fifo, "adapter_model.safetensors"), { write: true })).close();
    throw err;
  });
  assert.equal(fromFifo.status, 400, fromFifo.text);
  assert.match(fromFifo.text, /adapter_model\.safetensors is a FIFO, not a regular file/);
  const fromPasswd = await load("passwd", passwd);
  assert.equal(fromPasswd.status, 400, fromPasswd.text);
  assert.match(fromPasswd.text, /adapter_config\.json is a symbolic link, not a regular file/);
  assert.doesNotMatch(fromPasswd.text, /root:/);
  const fromLink = await load("linked", linked);
  assert.equal(fromLink.status, 400, fromLink.text);
  assert.match(fromLink.text, /adapter_model\.safetensors is a symbolic link/);
  // The real adapter loads, and nothing else was loaded.
  assert.equal((await load("good", good)).status, 200);
  const models = await (await server.get("/v1/models")).json();
  assert.deepEqual(models.data.map((m: { id: string }) => m.id), ["embedded", "good"]);
  assert.equal(await server.stop(), 0, server.stderr());
  await Deno.remove(tmp, { recursive: true });
});
