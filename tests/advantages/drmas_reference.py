"""A numpy transcription of the Dr. MAS code's outcome advantage estimators, for the tests.

Written from reading langfengQ/DrMAS at 19c632b (not copied): `verl/trainer/ppo/core_algos.py`
compute_grpo_outcome_advantage (lines 498-566), compute_reinforce_plus_plus_baseline_outcome_
advantage (634-677) and compute_rloo_outcome_advantage (680-721); `verl/utils/torch_functional.py`
masked_mean, masked_var and masked_whiten (136-187); and how `verl/trainer/ppo/ray_trainer.py`
compute_advantage (247-375) builds the group index (`uid`, or `uid_agent` under
group_by_agent_id).

Each row of the code's batch is one action (one agent output): its prompt uid, its trajectory
uid, its agent, its score (the summed token-level reward: the trajectory's reward minus the
action's invalid-action penalty) and its response tokens. Rows come trajectory by trajectory,
actions in turn order, so a trajectory's first row is its first action.

Reads a JSON list of steps on stdin, each `{"groups": [[{"reward", "actions": [{"agent",
"reward"?, "tokens"?}]}]]}`; writes, per step and estimator, every row's advantage in row order.
"""

import json
import sys
from collections import defaultdict

import numpy as np


def rows_of(groups):
    rows = []
    for g, trajectories in enumerate(groups):
        for t, traj in enumerate(trajectories):
            for action in traj["actions"]:
                score = action.get("reward", traj["reward"])
                rows.append({"uid": g, "traj": (g, t), "agent": action["agent"],
                             "score": score, "tokens": action.get("tokens", 1)})
    return rows


def grpo(rows, norm_by_std, group_by_agent_id, epsilon=1e-6):
    index = [f"{r['uid']}_{r['agent']}" if group_by_agent_id else r["uid"] for r in rows]
    scores = [r["score"] for r in rows]
    by_traj = defaultdict(list)
    for i, r in enumerate(rows):
        by_traj[(index[i], r["traj"])].append(scores[i])
    id2score = defaultdict(list)
    traj_avg = {}
    for (idx, traj), values in by_traj.items():
        if group_by_agent_id:
            id2score[idx].extend(values)
        else:
            traj_avg[(idx, traj)] = np.mean(values)
            id2score[idx].append(traj_avg[(idx, traj)])
    if not group_by_agent_id:
        scores = [traj_avg[(index[i], r["traj"])] for i, r in enumerate(rows)]
    mean, std = {}, {}
    for idx, values in id2score.items():
        if len(values) == 1:
            mean[idx], std[idx] = 0.0, 1.0
        else:
            mean[idx], std[idx] = np.mean(values), np.std(values, ddof=1)
    if norm_by_std:
        return [(s - mean[index[i]]) / (std[index[i]] + epsilon) for i, s in enumerate(scores)]
    return [s - mean[index[i]] for i, s in enumerate(scores)]


def first_action_baseline(rows):
    """The group's scores as the code collects them: one per trajectory, its first row's."""
    seen = set()
    id2score = defaultdict(list)
    for r in rows:
        if r["traj"] in seen:
            continue
        seen.add(r["traj"])
        id2score[r["uid"]].append(r["score"])
    mean = {idx: (0.0 if len(v) == 1 else np.mean(v)) for idx, v in id2score.items()}
    return id2score, mean


def rloo(rows):
    id2score, mean = first_action_baseline(rows)
    out = []
    for r in rows:
        n = len(id2score[r["uid"]])
        out.append(r["score"] * n / (n - 1) - mean[r["uid"]] * n / (n - 1) if n > 1 else r["score"])
    return out


def reinforce_pp_baseline(rows):
    _, mean = first_action_baseline(rows)
    centered = np.array([r["score"] - mean[r["uid"]] for r in rows])
    tokens = np.array([r["tokens"] for r in rows], dtype=float)
    # masked_whiten over every response token of the batch: a row's value repeated per token.
    total = tokens.sum()
    if total <= 1:
        return None  # masked_var raises: "The sum of the mask is one"
    mu = (centered * tokens).sum() / (total + 1e-8)
    var = (((centered - mu) ** 2) * tokens).sum() / (total + 1e-8)
    var = var * total / (total - 1)
    return list((centered - mu) / np.sqrt(var + 1e-8))


ESTIMATORS = {
    "grpo": lambda rows: grpo(rows, norm_by_std=True, group_by_agent_id=False),
    "dr-mas": lambda rows: grpo(rows, norm_by_std=True, group_by_agent_id=True),
    "dr-grpo": lambda rows: grpo(rows, norm_by_std=False, group_by_agent_id=False),
    "rloo": rloo,
    "reinforce++": reinforce_pp_baseline,
}

if __name__ == "__main__":
    steps = json.load(sys.stdin)
    out = []
    for step in steps:
        rows = rows_of(step["groups"])
        advantages = {name: f(rows) for name, f in ESTIMATORS.items()}
        out.append({name: None if a is None else [float(x) for x in a] for name, a in advantages.items()})
    json.dump(out, sys.stdout)
