import assert from "node:assert/strict";

const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));

Deno.test("deno.json declares the whole task surface", () => {
  for (
    const task of [
      "train",
      "eval",
      "replay",
      "verify",
      "sql",
      "report",
      "web",
      "pretrain",
      "bench",
      "test",
    ]
  ) {
    assert.ok(config.tasks[task], `task ${task} is missing`);
    assert.ok(config.tasks[task].description?.length > 0, `task ${task} has no description`);
  }
});

Deno.test("every npm dependency is pinned to an exact version", () => {
  for (const [name, spec] of Object.entries<string>(config.imports)) {
    if (!spec.startsWith("npm:")) continue;
    assert.match(spec, /@\d+\.\d+\.\d+[^@/]*(\/.*)?$/, `${name} is not pinned: ${spec}`);
  }
});
