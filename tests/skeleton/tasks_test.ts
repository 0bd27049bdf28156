import assert from "node:assert/strict";

const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
/** Each task's command line; tasks are `{ description, command }` so `deno task` lists them. */
const commands: [string, string][] = Object.entries<{ description: string; command: string }>(
  config.tasks,
).map(([task, { command }]) => [task, command]);

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

Deno.test("every task answers --help with exit 0", async () => {
  for (const [task, command] of commands) {
    const match = command.match(/^deno run -A (\S+\.ts)$/);
    if (!match || task === "test") continue;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", match[1], "--help"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(
      out.code,
      0,
      `${task} --help exited ${out.code}: ${new TextDecoder().decode(out.stderr)}`,
    );
    assert.ok(
      new TextDecoder().decode(out.stdout).trim().length > 0,
      `${task} --help printed nothing`,
    );
  }
});
