/**
 * A config file that names another `kind` for a section replaces the preset's whole section
 * (mergeConfig): the preset's other keys there are not kept. Where that changes what the run
 * gets, the user is warned, naming the keys and how to keep them (study v3's search-grpo cell
 * lost search-drmas's unbiased σ this way and ran with population σ).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig, mergeConfig, type ReplacedVariant } from "../../engine/config/mod.ts";
import { runCli } from "../support/run-cli.ts";

Deno.test("mergeConfig reports a section replaced by another kind, with the keys it drops", () => {
  const heard: ReplacedVariant[] = [];
  const merged = mergeConfig(
    { estimator: { kind: "dr-mas", sigma: "unbiased", eps: 1e-6 }, seed: 1 },
    { estimator: { kind: "grpo", eps: 1e-6 }, seed: 2 },
    (r) => heard.push(r),
  );
  assert.deepEqual(merged, { estimator: { kind: "grpo", eps: 1e-6 }, seed: 2 });
  assert.deepEqual(heard.slice(), [
    { path: "estimator", from: "dr-mas", to: "grpo", dropped: { sigma: "unbiased" } },
  ]);
  // Same kind: merged key by key, nothing replaced.
  mergeConfig({ estimator: { kind: "grpo", sigma: "unbiased" } }, {
    estimator: { kind: "grpo" },
  }, (r) => heard.push(r));
  assert.equal(heard.length, 1);
});

Deno.test("loadConfig warns only where the run loses a value: the default's equal is no loss", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-replaced-variant-" });
  try {
    const write = async (name: string, config: unknown) => {
      await Deno.writeTextFile(join(dir, name), JSON.stringify(config));
      return join(dir, name);
    };
    const warnings: string[] = [];
    // search-drmas's estimator is { kind: dr-mas, sigma: unbiased, eps: 1e-6 }; grpo's default
    // sigma is population, its default eps 1e-6.
    const lost = await write("lost.json", { extends: "search-drmas", estimator: { kind: "grpo" } });
    const config = await loadConfig({ file: lost, onWarning: (w) => warnings.push(w) });
    assert.equal(config.estimator.kind, "grpo");
    assert.deepEqual(warnings, [
      `${lost}: estimator.kind "grpo" replaces preset search-drmas's "dr-mas" estimator, so its ` +
      `sigma: "unbiased" is not kept (the default applies); name it in estimator to keep it`,
    ]);
    warnings.length = 0;
    const kept = await write("kept.json", {
      extends: "search-drmas",
      estimator: { kind: "grpo", sigma: "unbiased" },
    });
    await loadConfig({ file: kept, onWarning: (w) => warnings.push(w) });
    assert.deepEqual(warnings, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("train prints the warning on stderr and still runs what the file says", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-replaced-variant-cli-" });
  try {
    const file = join(dir, "lost.json");
    await Deno.writeTextFile(
      file,
      JSON.stringify({ extends: "search-drmas", estimator: { kind: "grpo" } }),
    );
    const r = await runCli("engine/cli/train.ts", "--config", file, "--print-config");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^warning: .*estimator\.kind "grpo" replaces preset search-drmas's/m);
    assert.match(r.stderr, /sigma: "unbiased" is not kept/);
    assert.equal(JSON.parse(r.stdout).estimator.sigma, "population");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
