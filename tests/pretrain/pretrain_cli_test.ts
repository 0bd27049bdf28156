import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { loadHfModel } from "../../adapters/hf/mod.ts";

const CLI = new URL("../../engine/cli/pretrain.ts", import.meta.url).pathname;

async function pretrain(args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("pretrain: a tiny run logs, evaluates, saves a loadable checkpoint, and reruns bit-identically", async () => {
  const root = await Deno.makeTempDir({ prefix: "polyrl-pretrain-" });
  try {
    const args = (out: string) => [
      "--size=small",
      "--steps=2",
      "--rows=2",
      "--row-length=512",
      "--eval-tasks=2",
      "--eval-every=2",
      "--log-every=1",
      `--out=${out}`,
    ];
    const a = await pretrain(args(join(root, "a")));
    assert.equal(a.code, 0, a.stderr);
    const log = (await Deno.readTextFile(join(root, "a", "pretrain-log.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(log.map((l) => l.event), ["start", "train", "train", "eval", "saved"]);
    assert.equal(log[0].size, "small");
    assert.ok(log[1].loss > 0 && Number.isFinite(log[1].loss));
    assert.equal(log[1].skippedNonFinite, 0);
    const keys = ["solver_d1", "verifier_d1", "critic_d1"];
    for (const key of [...keys, "router_search", "searcher_search", "answerer_search"]) {
      assert.ok(log[3].accuracy[key] >= 0 && log[3].accuracy[key] <= 1, key);
    }
    const model = await loadHfModel(join(root, "a"));
    assert.equal(model.config.numLayers, 4);

    const b = await pretrain(args(join(root, "b")));
    assert.equal(b.code, 0, b.stderr);
    assert.deepEqual(
      await Deno.readFile(join(root, "b", "model.safetensors")),
      await Deno.readFile(join(root, "a", "model.safetensors")),
    );

    // The second phase: continued from a's weights on the corpus with the search turns.
    const c = await pretrain([
      ...args(join(root, "c")).filter((x) => !x.startsWith("--steps")),
      "--steps=1",
      "--corpus=search",
      `--init=${join(root, "a")}`,
    ]);
    assert.equal(c.code, 0, c.stderr);
    const continued = (await Deno.readTextFile(join(root, "c", "pretrain-log.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    // Its log is a's whole log, then its own phase, which names the weights it started from.
    assert.deepEqual(continued.slice(0, log.length), log);
    const start = continued[log.length];
    assert.deepEqual([start.event, start.corpus], ["start", "search"]);
    assert.ok(start.mixture.route > 0 && start.mixture.query > 0 && start.mixture.answer > 0);
    const sha = createHash("sha256").update(
      await Deno.readFile(join(root, "a", "model.safetensors")),
    );
    assert.equal(start.init.sha256, sha.digest("hex"));
    assert.deepEqual(continued.slice(log.length).map((l) => l.event), [
      "start",
      "train",
      "eval",
      "saved",
    ]);
    const wrongSize = await pretrain([
      "--size=base",
      `--init=${join(root, "a")}`,
      "--steps=1",
      `--out=${join(root, "d")}`,
    ]);
    assert.equal(wrongSize.code, 2);
    assert.match(wrongSize.stderr, /give a checkpoint of --size base/);
    assert.notDeepEqual(
      await Deno.readFile(join(root, "c", "model.safetensors")),
      await Deno.readFile(join(root, "a", "model.safetensors")),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("pretrain: bad options exit 2 and name the option", async () => {
  for (
    const [arg, pattern] of [
      ["--size=huge", /--size must be one of base, small/],
      ["--steps=0", /--steps must be a positive integer/],
      ["--lr=-1", /--lr must be a positive number/],
      ["--corpus=poems", /--corpus must be one of arithmetic, search/],
      ["--max-hops=4", /--max-hops must be one of 2, 3, got 4/],
    ] as const
  ) {
    const r = await pretrain([arg, "--out=/nonexistent/never-written"]);
    assert.equal(r.code, 2, arg);
    assert.match(r.stderr, pattern);
  }
  // No default: a bare `deno task pretrain` would overwrite the committed model.
  const bare = await pretrain([]);
  assert.equal(bare.code, 2);
  assert.match(
    bare.stderr,
    /--out DIR is required: the committed model is adapters\/model\/embedded/,
  );
});
