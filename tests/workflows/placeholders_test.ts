/**
 * Prompt placeholders are the workflow's own declaration (`Workflow.placeholders`, per role):
 * buildWorkflow checks every agent's template against its role's before `run.started`, for
 * built-in and custom workflows alike. Through the real `train` CLI, a misspelt placeholder is
 * exit 2 naming the template, the placeholder, the known ones and the likely fix, and leaves the
 * store byte for byte as it was.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ConfigError, parseConfig, presetInput, presetNames } from "../../engine/config/mod.ts";
import {
  buildWorkflow,
  checkPlaceholderDeclaration,
  placeholderIssues,
  RoleDeclarationError,
  templatePlaceholders,
} from "../../engine/workflows/mod.ts";
import { bm25Retriever } from "../../adapters/search/mod.ts";
import { openStore, sha256Hex } from "../../events/mod.ts";
import { runStartedEvent, stepEvent } from "../events/sample-events.ts";
import { runCli } from "../support/run-cli.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const EXAMPLE = `${ROOT}/engine/workflows/examples/planner-executors.ts`;
const EXAMPLE_CONFIG = `${ROOT}/engine/workflows/examples/planner-executors.json`;

Deno.test("a template's placeholders are read as renderPrompt reads them", () => {
  assert.deepEqual(templatePlaceholders("{question} {{solutoin}} {plan}\n{question}"), [
    "question",
    "plan",
  ]);
  // Not placeholders in the grammar: left as text by renderPrompt, so not checked either.
  assert.deepEqual(templatePlaceholders("\\boxed{} {Plan} {plan2} {{ANSWER}}"), []);
});

Deno.test("every preset's templates use only the placeholders its workflow declares", async () => {
  const retriever = bm25Retriever(["Paris is the capital of France."]);
  for (const name of presetNames()) {
    const config = parseConfig(presetInput(name));
    const workflow = await buildWorkflow(config, retriever);
    for (const role of Object.keys(workflow.roles)) {
      assert.ok(Object.hasOwn(workflow.placeholders, role), `${name}: role ${role} declares none`);
    }
    assert.deepEqual(placeholderIssues(workflow, config.agents), [], name);
  }
});

Deno.test("a built-in workflow refuses a misspelt placeholder, naming the known ones", async () => {
  const raw = presetInput("smoke") as { agents: { prompt: string }[] };
  raw.agents[1].prompt = "Check {solutoin} against {question}; {{literal}} braces are fine";
  const err = await buildWorkflow(parseConfig(raw)).then(() => null, (e) => e);
  assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
  assert.equal(err.source, "the refine workflow");
  assert.deepEqual(err.issues, [{
    key: "agents[1].prompt",
    value: "{solutoin}",
    allowed: "a placeholder the refine workflow fills in role verifier's prompts (agent " +
      "verifier): one of {question}, {solution} (did you mean {solution}?); write {{ and }} for " +
      "literal braces",
  }]);
});

Deno.test("a placeholder declaration that is not role -> names is refused naming the fix", () => {
  const roles = { planner: 1, executor: 2 };
  const refusals: [unknown, RegExp][] = [
    [undefined, /the workflow's placeholders are undefined; declare placeholders as \{ role:/],
    [["question"], /the workflow's placeholders are \["question"\]/],
    [{ planner: ["question"] }, /no placeholders are declared for role executor; declare/],
    [{ planner: "question", executor: [] }, /role planner's placeholders are "question", not a/],
    [{ planner: ["Question"], executor: [] }, /role planner's placeholders are \["Question"\]/],
    [
      { planner: [], executor: [], planer: [] },
      /declared for role planer, which is not one of the workflow's roles \(planner, executor\)/,
    ],
  ];
  for (const [placeholders, message] of refusals) {
    assert.throws(
      () => checkPlaceholderDeclaration(placeholders, roles, "workflow.module /x/flow.ts"),
      (e: Error) =>
        e instanceof RoleDeclarationError && e.message.startsWith("workflow.module /x/flow.ts: ") &&
        message.test(e.message),
      String(message),
    );
  }
  // A role the configuration gives no agent needs no declaration.
  checkPlaceholderDeclaration({ planner: ["question"] }, { planner: 1, executor: 0 }, "m.ts");
});

/** Every file of `dir` with the SHA-256 of its bytes. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for await (const entry of Deno.readDir(dir)) {
    files[entry.name] = sha256Hex(await Deno.readFile(join(dir, entry.name)));
  }
  return files;
}

Deno.test("train --config with a misspelt placeholder: exit 2, the template named, the store untouched", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-placeholders-" });
  try {
    const store = join(dir, "events.sqlite");
    // A store that already holds a run: the refused run must leave every byte of it as it was.
    {
      await using s = await openStore(store);
      await s.append("earlier", [runStartedEvent(), stepEvent(0)]);
    }
    const raw = JSON.parse(await Deno.readTextFile(EXAMPLE_CONFIG));
    raw.workflow.module = EXAMPLE;
    raw.agents[2].prompt = "{question}\n\nPlan: {plan}\n\nOther executors:\n{pervious}";
    const config = join(dir, "misspelt.json");
    await Deno.writeTextFile(config, JSON.stringify(raw));
    const before = await snapshot(dir);

    const refused = await runCli(
      "engine/cli/train.ts",
      "--config",
      config,
      "--store",
      store,
      "--run-id",
      "misspelt",
    );
    assert.equal(refused.code, 2, refused.stderr);
    assert.ok(
      refused.stderr.includes(
        `error: invalid config workflow.module ${EXAMPLE}:\n` +
          `  agents[2].prompt = "{pervious}" is not allowed; expected a placeholder the ` +
          `planner-executors workflow fills in role executor's prompts (agent executor_b): one ` +
          `of {question}, {plan}, {previous} (did you mean {previous}?); write {{ and }} for ` +
          `literal braces\n`,
      ),
      refused.stderr,
    );
    assert.doesNotMatch(refused.stderr, /run id:/);
    assert.deepEqual(await snapshot(dir), before);
    await using s = await openStore(store, { readOnly: true });
    const recorded: string[] = [];
    for await (const e of s.readStream("misspelt")) recorded.push(e.type);
    assert.deepEqual(recorded, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a misspelt placeholder is refused before any store exists, and by --dry-run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-placeholders-" });
  try {
    const raw = JSON.parse(await Deno.readTextFile(EXAMPLE_CONFIG));
    raw.workflow.module = EXAMPLE;
    raw.agents[2].prompt = "{question} {pervious}";
    const config = join(dir, "misspelt.json");
    await Deno.writeTextFile(config, JSON.stringify(raw));
    const store = join(dir, "new.sqlite");
    for (const extra of [[], ["--dry-run"]]) {
      const r = await runCli("engine/cli/train.ts", "--config", config, "--store", store, ...extra);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /agents\[2\]\.prompt = "\{pervious\}" is not allowed/);
      // The workflow is checked with the other inputs, before the store is opened.
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["misspelt.json"]);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
