/**
 * A custom workflow's reward hooks (`Workflow.rewards`): a hooked role's turns get the hook's
 * reward instead of the trajectory scheme's; the planner-executors example's planner hook shows
 * in the log of a run trained through the real `train` CLI. A hook for a role the workflow does
 * not declare, or one that is not a function, is refused when the workflow is built; one that
 * returns no finite number stops the step naming the role.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type NewEvent, openStore, type StoredEvent } from "../../events/mod.ts";
import {
  rewardGroup,
  type RewardSettings,
  RoleRewardError,
} from "../../engine/trainer/group-rewards.ts";
import {
  checkRoleRewardDeclaration,
  type Episode,
  type EpisodeTurn,
  RoleDeclarationError,
} from "../../engine/workflows/mod.ts";
import { parsePlan, plannerReward } from "../../engine/workflows/examples/planner-executors.ts";
import { runCli } from "../support/run-cli.ts";

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const EXAMPLE_CONFIG = `${ROOT}/engine/workflows/examples/planner-executors.json`;
const PENALTY = 0.1; // the example config's rewards.invalid_action_penalty (the default)

type Extra = { responseTokens: { length: number } };

function turn(index: number, agent: string, role: string, text: string, valid: boolean) {
  return {
    turn: index,
    agent,
    role,
    prompt: "",
    output: { text, extra: { responseTokens: { length: 4 } } },
    action: role === "planner"
      ? { kind: "custom", name: "plan", data: { plan: parsePlan(text) } }
      : { kind: "answer", answer: valid ? "4" : null },
    valid,
  } as const satisfies EpisodeTurn<Extra>;
}

/** A right and a wrong episode: plan (readable or not), then one executor's answer. */
const episodes: Episode<Extra>[] = [
  {
    turns: [turn(0, "planner", "planner", "plan: add", true), turn(1, "ex", "executor", "4", true)],
    finalAnswer: "4",
  },
  {
    turns: [turn(0, "planner", "planner", "no plan", false), turn(1, "ex", "executor", "?", false)],
    finalAnswer: "5",
  },
];

Deno.test("a hooked role's turns get the hook's reward; other roles keep the scheme's", () => {
  const settings: RewardSettings = {
    scheme: "trajectory",
    weights: { accuracy: 1 },
    invalidActionPenalty: PENALTY,
  };
  const hooked = rewardGroup("4", episodes, {
    ...settings,
    roleRewards: { planner: plannerReward },
  });
  const plain = rewardGroup("4", episodes, settings);
  const rewards = (g: typeof hooked) => g.group.map((t) => t.actions.map((a) => a.reward));
  // The unreadable plan of the wrong episode: 0 by the hook, 0 - 0.1 by the scheme.
  assert.deepEqual(rewards(hooked), [[1, 1], [0, -0.1]]);
  assert.deepEqual(rewards(plain), [[1, 1], [-0.1, -0.1]]);
  assert.deepEqual(hooked.trajectories.map((t) => t.agentRewards), [
    { ex: 1, planner: 1 },
    { ex: -0.1, planner: 0 },
  ]);
  // The trajectory's own reward is the scheme's either way.
  assert.deepEqual(hooked.trajectories.map((t) => t.total), [1, 0]);

  const inputs: unknown[] = [];
  rewardGroup("4", episodes, {
    ...settings,
    roleRewards: {
      executor: (input) => {
        inputs.push([input.turn.agent, input.correct, input.trajectoryReward, input.episode]);
        return 0.5;
      },
    },
  });
  assert.deepEqual(inputs, [["ex", true, 1, episodes[0]], ["ex", false, 0, episodes[1]]]);
});

Deno.test("a hook that returns no finite number stops the step naming the role and the turn", () => {
  for (const value of [NaN, Infinity, "1" as unknown as number]) {
    assert.throws(
      () =>
        rewardGroup("4", episodes, {
          scheme: "trajectory",
          weights: { accuracy: 1 },
          invalidActionPenalty: 0.1,
          roleRewards: { planner: () => value },
        }),
      (e: Error) =>
        e instanceof RoleRewardError &&
        e.message === `the reward hook of role planner gave ${String(value)} for agent ` +
            "planner's turn 0; a reward hook must return a finite number",
    );
  }
});

Deno.test("a reward hook for an undeclared role, or one that is not a function, is refused", () => {
  const roles = { planner: 1, executor: 2 };
  checkRoleRewardDeclaration(undefined, roles, "m.ts");
  checkRoleRewardDeclaration({ planner: plannerReward }, roles, "m.ts");
  const refusals: [unknown, RegExp][] = [
    [
      { planer: plannerReward },
      /hook is declared for role planer, which is not one of the .*\(planner, executor\)/,
    ],
    [
      { planner: 1 },
      /role planner's reward hook is 1, not a function; declare rewards as \{ role:/,
    ],
    [[plannerReward], /the workflow's rewards are \[null\]; declare rewards as/],
  ];
  for (const [rewards, message] of refusals) {
    assert.throws(
      () => checkRoleRewardDeclaration(rewards, roles, "workflow.module /x/flow.ts"),
      (e: Error) =>
        e instanceof RoleDeclarationError && e.message.startsWith("workflow.module /x/flow.ts: ") &&
        message.test(e.message),
      String(message),
    );
  }
});

Deno.test("the example's planner hook gives the planner's rewards in the log of a trained run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-role-rewards-" });
  try {
    const store = join(dir, "events.sqlite");
    const trained = await runCli(
      "engine/cli/train.ts",
      "--config",
      EXAMPLE_CONFIG,
      "--store",
      store,
      "--run-id",
      "hooked",
    );
    assert.equal(trained.code, 0, trained.stderr);
    const log: StoredEvent<NewEvent>[] = [];
    {
      await using s = await openStore(store, { readOnly: true });
      for await (const e of s.readStream("hooked")) log.push(e as StoredEvent<NewEvent>);
    }
    const texts = new Map<string, string>();
    const rewards = new Map<string, number>();
    for (const e of log) {
      if (e.type === "turn.generated" && e.data.phase === "rollout") {
        texts.set(`${e.data.trajectory}/${e.data.agent}`, e.data.text);
      }
      if (e.type === "reward.assigned" && e.data.phase === "rollout") {
        rewards.set(`${e.data.trajectory}/${e.data.agent ?? "trajectory"}`, e.data.total);
      }
    }
    const trajectories = [...new Set([...texts.keys()].map((k) => k.split("/")[0]))];
    assert.equal(trajectories.length, 4);
    let differsFromScheme = 0;
    for (const t of trajectories) {
      const total = rewards.get(`${t}/trajectory`)!;
      const valid = parsePlan(texts.get(`${t}/planner`)!) !== null;
      const hook = valid ? total : 0;
      assert.equal(rewards.get(`${t}/planner`), hook, t);
      if (hook !== (valid ? total : total - PENALTY)) differsFromScheme++;
    }
    // The embedded model writes no `plan:` in 16 tokens: every plan shows the hook's 0, where
    // the trajectory scheme would have given the penalty.
    assert.equal(differsFromScheme, 4);
    const advantages = log.flatMap((e) =>
      e.type === "advantages.computed" ? e.data.advantages.filter((a) => a.agent === "planner") : []
    );
    assert.deepEqual(advantages.map((a) => a.reward), [0, 0, 0, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
