import assert from "node:assert/strict";
import {
  ConfigError,
  configHash,
  loadConfig,
  mergeConfig,
  overridesFromFlags,
  parseConfig,
  presetInput,
} from "../../engine/config/mod.ts";
import { runStarted } from "../../events/catalogue.ts";
import { minimalConfig } from "./fixture.ts";

/** Sorted-key JSON written independently of the engine's encoder. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined).sort((
      [a],
      [b],
    ) => (a < b ? -1 : 1));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${sortedJson(x)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

Deno.test("config hash is sha256 over the sorted-key JSON of the normalized config", async () => {
  const config = parseConfig(minimalConfig());
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(sortedJson(config)),
  );
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  assert.equal(configHash(config), hex);
});

Deno.test("config hash ignores key order and spelled-out defaults, not values", () => {
  const base = configHash(parseConfig(minimalConfig()));
  const reordered = Object.fromEntries(Object.entries(minimalConfig()).reverse());
  assert.equal(configHash(parseConfig(reordered)), base);
  assert.equal(configHash(parseConfig({ ...minimalConfig(), group_size: 4, seed: 0 })), base);
  assert.notEqual(configHash(parseConfig({ ...minimalConfig(), seed: 1 })), base);
  assert.match(base, /^[0-9a-f]{64}$/);
});

Deno.test("mergeConfig: objects merge, arrays replace, null removes", () => {
  assert.deepEqual(
    mergeConfig(
      { a: { b: 1, c: [1, 2] }, d: 1 },
      { a: { c: [3], e: { f: null, g: 2 } }, d: null },
    ),
    { a: { b: 1, c: [3], e: { g: 2 } } },
  );
  // Another kind is another variant: it replaces, so a full-weights agent keeps no LoRA rank.
  assert.deepEqual(
    mergeConfig(
      { trainable: { kind: "lora", rank: 8, alpha: 16 }, tasks: { kind: "a", x: 1 } },
      { trainable: { kind: "full" }, tasks: { x: 2 } },
    ),
    { trainable: { kind: "full" }, tasks: { kind: "a", x: 2 } },
  );
});

Deno.test("loadConfig: default preset, preset + overrides, file extending a preset", async () => {
  assert.equal((await loadConfig()).name, "refine-drmas");
  const smoke = await loadConfig({
    preset: "smoke",
    overrides: overridesFromFlags({ seed: "7", device: "cpu" }),
  });
  assert.equal(smoke.seed, 7);
  assert.equal(smoke.runtime.device, "cpu");
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/exp.json`;
    await Deno.writeTextFile(
      file,
      JSON.stringify({ extends: "smoke", steps: 1, sampling: { temperature: 0.5 } }),
    );
    const c = await loadConfig({ file, overrides: { steps: 2 } });
    assert.equal(c.steps, 2);
    assert.equal(c.sampling.temperature, 0.5);
    assert.equal(c.sampling.max_tokens, presetInput("smoke").sampling!.max_tokens);
    await Deno.writeTextFile(file, JSON.stringify({ ...minimalConfig(), steps: -1 }));
    await assert.rejects(
      () => loadConfig({ file }),
      (e) => e instanceof ConfigError && e.source === file && e.issues[0].key === "steps",
    );
    await Deno.writeTextFile(file, "{ not json");
    await assert.rejects(
      () => loadConfig({ file }),
      (e) => e instanceof ConfigError && /JSON text/.test(e.message),
    );
    await assert.rejects(
      () => loadConfig({ file, preset: "smoke" }),
      (e) => e instanceof ConfigError && e.issues[0].key === "--preset",
    );
    await assert.rejects(
      () => loadConfig({ file: `${dir}/missing.json` }),
      (e) => e instanceof ConfigError && e.issues[0].key === "--config",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("overridesFromFlags parses numbers and devices, naming the flag on error", () => {
  assert.deepEqual(overridesFromFlags({ steps: "3", store: "postgres://x/y" }), {
    steps: 3,
    store: "postgres://x/y",
  });
  assert.throws(
    () => overridesFromFlags({ seed: "-1" }),
    (e) => e instanceof ConfigError && e.issues[0].key === "--seed",
  );
  assert.throws(
    () => overridesFromFlags({ device: "gpu" }),
    (e) => e instanceof ConfigError && /webgpu/.test(e.message),
  );
});

Deno.test("a normalized config and its hash pass the run.started event's own check", () => {
  const config = parseConfig(presetInput("debate-mada"));
  const parsed = runStarted.schema.safeParse({
    config,
    configHash: configHash(config),
    seed: config.seed,
    codeVersion: "test",
    runtime: {
      deno: Deno.version.deno,
      v8: Deno.version.v8,
      typescript: Deno.version.typescript,
      onnxruntime: null,
      executionProvider: "cpu",
      adapter: null,
      threads: config.runtime.threads,
      os: Deno.build.os,
      arch: Deno.build.arch,
    },
  });
  assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
});
