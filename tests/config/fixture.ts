import assert from "node:assert/strict";
import { ConfigError, type ConfigIssue, parseConfig } from "../../engine/config/mod.ts";

/** The smallest valid config: a refine workflow with its two agents; everything else defaulted. */
export function minimalConfig(): Record<string, unknown> {
  return {
    tasks: { kind: "synthetic-math" },
    workflow: { kind: "refine" },
    agents: [
      { id: "solver", role: "solver", prompt: "Solve {question}", model: "embedded" },
      { id: "verifier", role: "verifier", prompt: "Check {solution}", model: "embedded" },
    ],
  };
}

/** Parses `raw`, which must fail; returns its issues. */
export function issuesOf(raw: unknown): readonly ConfigIssue[] {
  try {
    parseConfig(raw, "test.json");
  } catch (e) {
    assert.ok(e instanceof ConfigError, `expected ConfigError, got ${e}`);
    assert.equal(e.source, "test.json");
    return e.issues;
  }
  throw new Error("config was accepted");
}

/** Asserts there is an issue at `key` whose allowed text matches `allowed`, with value `value`. */
export function assertIssue(
  issues: readonly ConfigIssue[],
  key: string,
  value: unknown,
  allowed: RegExp,
): void {
  const found = issues.find((i) => i.key === key);
  assert.ok(found, `no issue at ${key}; got ${JSON.stringify(issues)}`);
  assert.deepEqual(found.value, value);
  assert.match(found.allowed, allowed);
}
