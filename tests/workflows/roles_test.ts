/**
 * Roles come from the workflow's own declaration (`Workflow.roles`): buildWorkflow checks the
 * config's agents against it for built-in and custom workflows alike.
 */
import assert from "node:assert/strict";
import { ConfigError, parseConfig } from "../../engine/config/mod.ts";
import {
  buildWorkflow,
  checkRoleDeclaration,
  RoleDeclarationError,
} from "../../engine/workflows/mod.ts";
import { bm25Retriever } from "../../adapters/search/mod.ts";
import { assertIssue, minimalConfig } from "../config/fixture.ts";

const agent = (id: string, role: string) => ({
  id,
  role,
  prompt: "p {question}",
  model: "embedded",
});

/** The issues buildWorkflow reports for `raw`, which must fail the role check. */
async function roleErrors(raw: Record<string, unknown>) {
  const config = parseConfig(raw, "test.json");
  const err = await buildWorkflow(config).then(() => null, (e) => e);
  assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
  return err.issues;
}

Deno.test("built-in workflows need their declared roles, each exactly as often as configured", async () => {
  const refine = await roleErrors({
    ...minimalConfig(),
    agents: [agent("s", "solver"), agent("c", "critic")],
  });
  assertIssue(refine, "agents[1].role", "critic", /one of solver, verifier for a refine workflow/);
  assertIssue(
    refine,
    "agents",
    ["s:solver", "c:critic"],
    /exactly 1 agent\(s\) with role verifier .*found 0/,
  );
  const debate = await roleErrors({
    ...minimalConfig(),
    workflow: { kind: "debate", generators: 2, critics: 1, rounds: 2 },
    agents: [agent("g", "generator"), agent("c", "critic")],
  });
  assertIssue(
    debate,
    "agents",
    ["g:generator", "c:critic"],
    /exactly 2 agent\(s\) with role generator .*found 1/,
  );
  // A generators-only debate declares no critic, so a critic agent is out of place.
  const vote = await roleErrors({
    ...minimalConfig(),
    workflow: { kind: "debate", generators: 1, critics: 0, rounds: 1 },
    agents: [agent("g", "generator"), agent("c", "critic")],
  });
  assertIssue(vote, "agents[1].role", "critic", /one of generator for a debate workflow/);
});

Deno.test("the search workflow's roles are checked like the others", async () => {
  const config = parseConfig({
    ...minimalConfig(),
    tasks: { kind: "synthetic-search" },
    workflow: { kind: "search" },
    agents: [agent("v", "verifier"), agent("s", "searcher")],
  });
  const retriever = bm25Retriever(["Paris is the capital of France."]);
  const err = await buildWorkflow(config, retriever).then(() => null, (e) => e);
  assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
  assert.equal(err.source, "the search workflow");
  assert.equal(err.issues.length, 1);
  assertIssue(err.issues, "agents", ["v:verifier", "s:searcher"], /role answerer .*found 0/);
});

Deno.test("a declaration that is not role -> count names the module and the fix", () => {
  assert.throws(
    () => checkRoleDeclaration(["planner", "executor"], "workflow.module /x/old.ts"),
    (e: Error) =>
      e instanceof RoleDeclarationError &&
      /workflow\.module \/x\/old\.ts: the workflow's roles are \["planner","executor"\]/.test(
        e.message,
      ) && /\{ planner: 1, executor: 2 \}/.test(e.message),
  );
  assert.throws(
    () => checkRoleDeclaration({ planner: 1.5 }, "m.ts"),
    /role planner has count 1\.5, not a non-negative integer/,
  );
  checkRoleDeclaration({ planner: 1, executor: 0 }, "m.ts");
});
