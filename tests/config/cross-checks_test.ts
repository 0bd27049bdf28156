import assert from "node:assert/strict";
import { parseConfig, presetInput } from "../../engine/config/mod.ts";
import { assertIssue, issuesOf, minimalConfig } from "./fixture.ts";

const agent = (id: string, role: string, extra: Record<string, unknown> = {}) => ({
  id,
  role,
  prompt: "p {question}",
  model: "embedded",
  ...extra,
});

Deno.test("agent ids must be unique", () => {
  const issues = issuesOf({
    ...minimalConfig(),
    agents: [agent("a", "solver"), agent("a", "verifier")],
  });
  assertIssue(issues, "agents[1].id", "a", /not already used \(agents\[0\]\)/);
});

// Roles are the workflow's own declaration, checked when it is built (tests/workflows/roles_test.ts).
Deno.test("a custom workflow's config parses with any roles and keeps its module and params", () => {
  const custom = parseConfig({
    ...minimalConfig(),
    workflow: { kind: "custom", module: "./my-flow.ts", params: { depth: 2 } },
    agents: [agent("x", "planner")],
  });
  assert.deepEqual(custom.workflow, {
    kind: "custom",
    module: "./my-flow.ts",
    params: { depth: 2 },
  });
});

Deno.test("debate critics must match rounds; mada needs a debate", () => {
  const oneRound = issuesOf({
    ...minimalConfig(),
    workflow: { kind: "debate", generators: 1, critics: 1, rounds: 1 },
    agents: [agent("g", "generator"), agent("c", "critic")],
  });
  assertIssue(oneRound, "workflow.critics", 1, /0 when rounds is 1/);
  const noCritics = issuesOf({
    ...minimalConfig(),
    workflow: { kind: "debate", generators: 1, critics: 0, rounds: 2 },
    agents: [agent("g", "generator")],
  });
  assertIssue(noCritics, "workflow.critics", 0, /at least 1 when rounds > 1/);
  const mada = issuesOf({ ...minimalConfig(), estimator: { kind: "mada" } });
  assertIssue(mada, "estimator.kind", "mada", /needs workflow.kind "debate"/);
  const madaFormat = issuesOf({
    ...presetInput("debate-mada"),
    rewards: { weights: { accuracy: 2, format: 1 } },
  });
  assertIssue(madaFormat, "rewards.weights.format", 1, /only accuracy and length weights/);
});

Deno.test("agent_to_wg: separate, shared by model, or an explicit map", () => {
  const separate = parseConfig(minimalConfig());
  assert.deepEqual(separate.agent_to_wg, { solver: "solver", verifier: "verifier" });
  assert.deepEqual(separate.agents.map((a) => a.wg), ["solver", "verifier"]);
  const shared = parseConfig({ ...minimalConfig(), agent_to_wg: "shared" });
  assert.deepEqual(shared.worker_groups.map((g) => [g.id, g.agents]), [["solver+verifier", [
    "solver",
    "verifier",
  ]]]);
  const explicit = parseConfig({
    ...minimalConfig(),
    agent_to_wg: { solver: "policy", verifier: "policy" },
  });
  assert.deepEqual(explicit.worker_groups.map((g) => g.id), ["policy"]);
  // Different models under "shared" stay apart.
  const twoModels = parseConfig({
    ...minimalConfig(),
    agent_to_wg: "shared",
    agents: [agent("solver", "solver"), agent("verifier", "verifier", { model: "/models/other" })],
  });
  assert.deepEqual(twoModels.worker_groups.map((g) => g.id), ["solver", "verifier"]);
});

Deno.test("an explicit map must cover exactly the agents", () => {
  const issues = issuesOf({ ...minimalConfig(), agent_to_wg: { solver: "a", critic: "b" } });
  assertIssue(issues, "agent_to_wg.critic", "b", /agent ids \(solver, verifier\)/);
  assertIssue(issues, "agent_to_wg.verifier", undefined, /a worker-group id for every agent/);
});

Deno.test("agents sharing a worker group must agree on model, trainable part and optimizer", () => {
  const issues = issuesOf({
    ...minimalConfig(),
    agent_to_wg: { solver: "policy", verifier: "policy" },
    agents: [
      agent("solver", "solver", { optimizer: { lr: 1e-5 } }),
      agent("verifier", "verifier", { model: "/models/other", trainable: { kind: "full" } }),
    ],
  });
  assertIssue(
    issues,
    "agents[1].model",
    "/models/other",
    /same model as agents\[0\] \(solver\).*"policy"/,
  );
  assertIssue(issues, "agents[1].trainable", { kind: "full" }, /same trainable/);
  const optimizer = issues.find((i) => i.key === "agents[1].optimizer");
  assert.ok(optimizer && /same optimizer/.test(optimizer.allowed));
  // Per-agent hyperparameters are fine when the agents are in separate groups.
  const separate = parseConfig({
    ...presetInput("refine-drmas"),
    agents: [agent("solver", "solver", { optimizer: { lr: 1e-5 } }), agent("verifier", "verifier")],
  });
  assert.deepEqual(separate.worker_groups.map((g) => g.optimizer.lr), [1e-5, 1e-4]);
});

Deno.test("search tasks: min_hops may not exceed max_hops", () => {
  const tasks = { kind: "synthetic-search", documents: 50, max_hops: 1, min_hops: 2 };
  const issues = issuesOf({ ...minimalConfig(), tasks });
  assertIssue(issues, "tasks.min_hops", 2, /at most tasks\.max_hops \(1\)/);
});
