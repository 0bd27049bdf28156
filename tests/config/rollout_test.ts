import assert from "node:assert/strict";
import { configHash, parseConfig } from "../../engine/config/mod.ts";
import { assertIssue, issuesOf, minimalConfig } from "./fixture.ts";

const openai = (rollout: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  ...minimalConfig(),
  ...extra,
  rollout: {
    backend: "openai",
    endpoints: ["http://127.0.0.1:8000"],
    adapter_dir: "/shared/adapters",
    ...rollout,
  },
});

Deno.test("rollout: absent means local and adds no key to the parsed config (hashes stay); defaults filled when given", () => {
  const plain = parseConfig(minimalConfig());
  assert.equal(plain.rollout, undefined);
  assert.equal("rollout" in plain, false);
  const local = parseConfig({ ...minimalConfig(), rollout: {} });
  assert.deepEqual(local.rollout, {
    backend: "local",
    endpoints: [],
    timeout_s: 600,
    max_in_flight: 64,
    tis_cap: 2,
  });
  assert.notEqual(configHash(local), configHash(plain));
  const served = parseConfig(openai());
  assert.equal(served.rollout!.backend, "openai");
});

Deno.test("rollout.engine: absent adds no key (an openai config's hash stays), sglang is kept", () => {
  const vllm = parseConfig(openai());
  assert.equal("engine" in vllm.rollout!, false);
  const sglang = parseConfig(openai({ engine: "sglang" }));
  assert.equal(sglang.rollout!.engine, "sglang");
  assert.notEqual(configHash(sglang), configHash(vllm));
  assert.equal(parseConfig(openai({ engine: "vllm" })).rollout!.engine, "vllm");
  assertIssue(issuesOf(openai({ engine: "tgi" })), "rollout.engine", "tgi", /vllm|sglang/);
  assertIssue(issuesOf(openai({ engine: 1 })), "rollout.engine", 1, /vllm|sglang/);
});

Deno.test("rollout: bad fields are refused with the key and what is allowed", () => {
  assertIssue(
    issuesOf(openai({ endpoints: ["ftp://x"] })),
    "rollout.endpoints[0]",
    "ftp://x",
    /http/,
  );
  assertIssue(issuesOf(openai({ tis_cap: -1 })), "rollout.tis_cap", -1, />= 0/);
  assertIssue(issuesOf(openai({ timeout_s: 0 })), "rollout.timeout_s", 0, /> 0/);
  assertIssue(issuesOf(openai({ max_in_flight: 0 })), "rollout.max_in_flight", 0, />= 1/);
  assertIssue(issuesOf(openai({ api_key_env: "A B" })), "rollout.api_key_env", "A B", /variable/);
  assertIssue(issuesOf(openai({ backend: "vllm" })), "rollout.backend", "vllm", /local|openai/);
  assert.ok(issuesOf(openai({ port: 1 })).some((i) => i.key.startsWith("rollout")));
});

Deno.test("rollout openai: full-weight groups, no endpoints, no adapter_dir, mixed bases, TIS without recompute are refused", () => {
  const agents = minimalConfig().agents as Record<string, unknown>[];
  const full = agents.map((a, i) => i === 0 ? { ...a, trainable: { kind: "full" } } : a);
  assertIssue(
    issuesOf(openai({}, { agents: full })),
    "agents[0].trainable.kind",
    "full",
    /no weight-update path for full weights.*backend "local"/,
  );
  assertIssue(issuesOf(openai({ endpoints: [] })), "rollout.endpoints", [], /at least one server/);
  assertIssue(
    issuesOf(openai({ adapter_dir: undefined })),
    "rollout.adapter_dir",
    undefined,
    /folder every server reads/,
  );
  const mixed = agents.map((a, i) => i === 0 ? { ...a, model: "models/other" } : a);
  assertIssue(issuesOf(openai({}, { agents: mixed })), "agents[].model", [
    "models/other",
    "embedded",
  ], /one base model/);
  assertIssue(
    issuesOf(openai({}, { updates: { old_logprobs: "rollout" } })),
    "updates.old_logprobs",
    "rollout",
    /recompute with rollout.tis_cap > 0/,
  );
  // TIS off: the recorded logprobs may serve as old ones.
  parseConfig(openai({ tis_cap: 0 }, { updates: { old_logprobs: "rollout" } }));
  // Frozen groups need no adapter folder.
  parseConfig(openai({ adapter_dir: undefined }, {
    agents: agents.map((a) => ({ ...a, trainable: { kind: "frozen" } })),
  }));
  // The local backend takes full weights as before.
  parseConfig({ ...minimalConfig(), agents: full, rollout: { backend: "local" } });
});
