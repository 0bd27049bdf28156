import assert from "node:assert/strict";
import {
  MAX_BATCH_SIZE,
  MAX_DOCUMENTS,
  MAX_EPOCHS,
  MAX_GROUP_SIZE,
  MAX_MINI_BATCHES,
  MAX_NEW_TOKENS,
  MAX_ROLLOUT_EPISODES,
  MAX_SAMPLES,
  MAX_SPLIT,
  MAX_STEPS,
  MAX_THREADS,
  mergeConfig,
  parseConfig,
} from "../../engine/config/mod.ts";
import { assertIssue, issuesOf, minimalConfig } from "./fixture.ts";

/** One key set past its bound, as a config override, and the bound. */
const PAST_BOUND: [key: string, override: Record<string, unknown>, max: number][] = [
  ["steps", { steps: MAX_STEPS + 1 }, MAX_STEPS],
  ["batch_size", { batch_size: 1e15 }, MAX_BATCH_SIZE],
  ["group_size", { group_size: MAX_GROUP_SIZE + 1 }, MAX_GROUP_SIZE],
  ["sampling.max_tokens", { sampling: { max_tokens: MAX_NEW_TOKENS + 1 } }, MAX_NEW_TOKENS],
  ["evaluation.n_samples", { evaluation: { n_samples: 99999999999 } }, MAX_SAMPLES],
  ["evaluation.every_steps", { evaluation: { every_steps: MAX_STEPS + 1 } }, MAX_STEPS],
  ["checkpoint.every_steps", { checkpoint: { every_steps: MAX_STEPS + 1 } }, MAX_STEPS],
  ["updates.mini_batches", { updates: { mini_batches: MAX_MINI_BATCHES + 1 } }, MAX_MINI_BATCHES],
  ["updates.epochs", { updates: { epochs: MAX_EPOCHS + 1 } }, MAX_EPOCHS],
  ["runtime.threads", { runtime: { threads: MAX_THREADS + 1 } }, MAX_THREADS],
  ["tasks.splits.train", { tasks: { splits: { train: MAX_SPLIT + 1 } } }, MAX_SPLIT],
  ["tasks.splits.validation", { tasks: { splits: { validation: MAX_SPLIT + 1 } } }, MAX_SPLIT],
  ["tasks.splits.test", { tasks: { splits: { test: 1e12 } } }, MAX_SPLIT],
];

Deno.test("every count of the config has an upper bound, named in the issue", () => {
  for (const [key, override, max] of PAST_BOUND) {
    const issues = issuesOf(mergeConfig(minimalConfig(), override));
    const value = key.split(".").reduce(
      (v: unknown, k) => (v as Record<string, unknown>)[k],
      override,
    );
    assertIssue(issues, key, value, new RegExp(`^an integer <= ${max}$`));
  }
  const search = {
    ...minimalConfig(),
    tasks: { kind: "synthetic-search", documents: MAX_DOCUMENTS + 1 },
    workflow: { kind: "search" },
    agents: ["verifier", "searcher", "answerer"].map((role) => ({
      id: role,
      role,
      prompt: "{question}",
      model: "embedded",
    })),
  };
  assertIssue(
    issuesOf(search),
    "tasks.documents",
    MAX_DOCUMENTS + 1,
    new RegExp(`<= ${MAX_DOCUMENTS}`),
  );
  // The generator chains one to three facts: more must be refused here, not at the run's start.
  const fourHops = { ...search, tasks: { kind: "synthetic-search", max_hops: 4 } };
  assertIssue(issuesOf(fourHops), "tasks.max_hops", 4, /^an integer <= 3$/);
});

Deno.test("a step's episodes, batch_size * group_size, are bounded too", () => {
  const fits = parseConfig({ ...minimalConfig(), batch_size: 32, group_size: 1024 });
  assert.equal(fits.batch_size * fits.group_size, MAX_ROLLOUT_EPISODES);
  assertIssue(
    issuesOf({ ...minimalConfig(), batch_size: 33, group_size: 1024 }),
    "batch_size",
    33,
    /^batch_size \* group_size <= 32768 episodes per step .*group_size is 1024, so batch_size <= 32\)$/,
  );
});

Deno.test("an in-run evaluation of the generated splits is bounded by its episodes", () => {
  const big = mergeConfig(minimalConfig(), {
    tasks: { splits: { train: 10, validation: 40, test: 0 } },
    evaluation: { n_samples: 1024 },
  });
  assertIssue(
    issuesOf(big),
    "evaluation.n_samples",
    1024,
    /^problems \* n_samples <= 32768 episodes per evaluation .*hold 40 problems\)$/,
  );
  parseConfig(mergeConfig(big, { evaluation: { n_samples: 819 } }));
});
