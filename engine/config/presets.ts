/**
 * Named presets: complete experiment configs for the papers' recipes, and `smoke` for CI. They are
 * raw config objects (defaults still to apply), so a file can start from one with `"extends"`.
 * Prompt templates use the placeholders each workflow fills (engine/workflows): refine's solver
 * {question} {previous} {feedback} {revision} and verifier {question} {solution}; search's agents {question}
 * {evidence}; debate's agents {question} {answers}. They ask for the output formats the
 * workflows parse (a boxed answer, `verdict: accept|revise`, `action: search|answer`, `query:`).
 */
import { ConfigError } from "./errors.ts";
import type { ExperimentConfigInput } from "./schema.ts";

/** Embedded base model: what the presets train so that they run offline on 2 CPU cores. */
const MODEL = "embedded";

const FINAL = "End with: The final answer is \\boxed{ANSWER}.";
const SOLVE = `Solve the problem. ${FINAL}`;

/** The presets' prompt templates; pretraining (engine/pretrain) teaches the embedded model them. */
export const PRESET_PROMPTS = {
  // The bare question first, as the embedded model was pretrained (question -> \boxed{answer});
  // revisions append the previous attempt and the review.
  solver: "{question}{revision}",
  verifier: "Check the solution step by step. End with `verdict: accept` if it is correct, " +
    "otherwise `verdict: revise` and what is wrong.\n\nProblem: {question}\n\nSolution: {solution}",
  router: "Does the evidence answer the question? End with `action: answer` if it does, " +
    "otherwise `action: search`.\n\nQuestion: {question}\n\nEvidence:\n{evidence}",
  searcher: "Write one search query for the missing fact as `query: ...`.\n\n" +
    "Question: {question}\n\nEvidence:\n{evidence}",
  answerer: `Answer from the evidence. ${FINAL}\n\n` +
    "Question: {question}\n\nEvidence:\n{evidence}",
  generator: "{question}",
  // MADA-RL's debate concatenation (its appendix A.1), the previous round's answers in {answers}.
  critic: `${SOLVE}\n\nProblem: {question}\n\nThese are the recent opinions from other agents:\n` +
    "{answers}\n\nUsing each response as additional advice, can you give an updated answer to " +
    "the question?",
} as const;

const lora = () => ({ kind: "lora" as const, rank: 8, alpha: 16, targets: ["q_proj", "v_proj"] });

const refine = (
  estimator: "dr-mas" | "grpo" | "dr-grpo",
  name: string,
): ExperimentConfigInput => ({
  name,
  seed: 0,
  // Sized so that the default `deno task train` finishes within minutes on 2 CPU cores: answers
  // and verdicts are short, and avg@16 / pass@16 are taken over 16 held-out problems. Difficulty 1
  // is what the embedded model was pretrained on (engine/pretrain), so RL starts with signal.
  tasks: {
    kind: "synthetic-math",
    difficulty: 1,
    splits: { train: 256, validation: 16, test: 64 },
  },
  workflow: { kind: "refine", max_loops: 3 },
  agents: [
    {
      id: "solver",
      role: "solver",
      prompt: PRESET_PROMPTS.solver,
      model: MODEL,
      trainable: lora(),
    },
    {
      id: "verifier",
      role: "verifier",
      prompt: PRESET_PROMPTS.verifier,
      model: MODEL,
      trainable: lora(),
    },
  ],
  agent_to_wg: "separate",
  // The code's torch.std (n - 1) and eps (core_algos.py lines 556-566): all three refine presets
  // follow run_math.sh, and only the estimator differs between them.
  estimator: { kind: estimator, sigma: "unbiased", eps: 1e-6 },
  group_size: 4,
  batch_size: 4,
  steps: 20,
  sampling: { temperature: 1, top_p: 1, max_tokens: 48 },
  // Dr. MAS's run_math.sh: veRL's token-mean loss, clip 0.2, no KL, one update per batch
  // (ppo_mini_update_num=1) on recomputed old logprobs.
  // Dr. GRPO's loss divides each sequence's token sum by a constant (sampling.max_tokens).
  // run_math.sh line 64: entropy_coeff=0.0; clip_ratio_c and kl_clamp are veRL's defaults (3, 10).
  loss: {
    clip_eps: 0.2,
    kl_coef: 0,
    aggregation: estimator === "dr-grpo" ? "seq-sum-const" : "token-mean",
    entropy_coeff: 0,
  },
  // run_math.sh line 37: each agent's ppo_micro_batch_size_per_gpu is 4, so veRL aggregates the
  // loss per 4 turns and averages over them.
  updates: { mini_batches: 1, epochs: 1, old_logprobs: "recompute", micro_batch_size: 4 },
  // run_math.sh line 79: invalid_action_penalty_coef=0.1.
  rewards: { weights: { accuracy: 1 }, invalid_action_penalty: 0.1 },
  evaluation: { benchmarks: ["validation"], n_samples: 16, every_steps: 0 },
});

const PRESETS: Readonly<Record<string, ExperimentConfigInput>> = {
  /** Dr. MAS math: solver + verifier refinement loop, agent-wise normalization. */
  "refine-drmas": refine("dr-mas", "refine-drmas"),
  /** The same with GRPO's global baseline: the paper's comparison. */
  "refine-grpo": refine("grpo", "refine-grpo"),
  /** The same with Dr. GRPO: no std in the advantage, a constant loss normalizer. */
  "refine-drgrpo": refine("dr-grpo", "refine-drgrpo"),
  /** Dr. MAS search: verifier routes to searcher until evidence suffices, then answerer. */
  "search-drmas": {
    name: "search-drmas",
    // The world the embedded model's pretraining holds out (engine/pretrain/search-corpus.ts).
    tasks: { kind: "synthetic-search", documents: 200, max_hops: 2 },
    // One document per query: with three, BM25 often returned both facts of a two-hop question
    // at once, and the embedded model's rollouts were right 88-94% of the time (too few groups
    // with a wrong answer to learn from); with one they are right 69-88%.
    workflow: { kind: "search", max_turns: 4, top_k: 1 },
    agents: [
      {
        id: "verifier",
        role: "verifier",
        prompt: PRESET_PROMPTS.router,
        model: MODEL,
        trainable: lora(),
      },
      {
        id: "searcher",
        role: "searcher",
        prompt: PRESET_PROMPTS.searcher,
        model: MODEL,
        trainable: lora(),
      },
      {
        id: "answerer",
        role: "answerer",
        prompt: PRESET_PROMPTS.answerer,
        model: MODEL,
        trainable: lora(),
      },
    ],
    agent_to_wg: "separate",
    // run_search.sh line 25 (group_by_agent_id=True) with the code's torch.std (n - 1).
    estimator: { kind: "dr-mas", sigma: "unbiased", eps: 1e-6 },
    group_size: 4,
    batch_size: 4,
    steps: 20,
    // 128 tokens (bytes): the pretrained replies copy the facts found before their verdict,
    // query or answer, up to ~110 bytes for a two-hop answer (engine/pretrain/search-corpus.ts).
    sampling: { temperature: 1, top_p: 1, max_tokens: 128, stop: ["</search>", "</answer>"] },
    // Dr. MAS's run_search.sh: five updates per batch (ppo_mini_update_num=5), token-mean. It
    // sets no entropy_coeff, so veRL's actor default applies: 0.001 (ppo_trainer.yaml line 59).
    loss: { clip_eps: 0.2, kl_coef: 0, aggregation: "token-mean", entropy_coeff: 0.001 },
    // run_search.sh line 37: ppo_micro_batch_size_per_gpu 4 for each of the three agents.
    updates: { mini_batches: 5, epochs: 1, old_logprobs: "recompute", micro_batch_size: 4 },
    // run_search.sh line 77: invalid_action_penalty_coef=0.01 (0.1 is the math script's).
    rewards: { weights: { accuracy: 1 }, invalid_action_penalty: 0.01 },
    // avg@4 / pass@4 over the 64 held-out questions: an episode is up to nine turns, and 64 x 16
    // samples took 3m44s of a two-step run; 4 samples keep a default run within minutes. The
    // splits stay the world's defaults: the pretraining corpus holds out this world's questions.
    evaluation: { benchmarks: ["validation"], n_samples: 4, every_steps: 10 },
  },
  /**
   * MADA-RL: 3 generators, then 1 round of 3 critics (its Table 7: 3, 3, 2 rounds); one LoRA
   * adapter per agent (rank 16, alpha 128, dropout 0.05; group size 4, temperature 0.7; Table 6).
   * lr is 1e-4 rather than the paper's 1e-6, which is tuned for a 1.5B model, not the embedded one.
   */
  "debate-mada": {
    name: "debate-mada",
    tasks: { kind: "synthetic-math", difficulty: 1 },
    workflow: { kind: "debate", generators: 3, critics: 3, rounds: 2 },
    agents: [
      ...[1, 2, 3].map((i) => ({
        id: `generator-${i}`,
        role: "generator",
        prompt: PRESET_PROMPTS.generator,
      })),
      ...[1, 2, 3].map((i) => ({
        id: `critic-${i}`,
        role: "critic",
        prompt: PRESET_PROMPTS.critic,
      })),
    ].map((a) => ({
      ...a,
      model: MODEL,
      trainable: {
        kind: "lora",
        rank: 16,
        alpha: 128,
        dropout: 0.05,
        targets: ["q_proj", "v_proj"],
      },
      optimizer: { lr: 1e-4, weight_decay: 0, warmup_ratio: 0.1 },
    })),
    agent_to_wg: "separate",
    // MADA-RL publishes no code and names no convention; population sigma is the papers'
    // definition (the Dr. MAS paper's Sec. 4), so this preset keeps it.
    estimator: { kind: "mada", sigma: "population", eps: 1e-6 },
    group_size: 4,
    batch_size: 4,
    steps: 20,
    sampling: { temperature: 0.7, top_p: 1, max_tokens: 96 },
    // Table 6: GRPO beta 0.04, epsilon 0.2, one update per batch.
    loss: { clip_eps: 0.2, kl_coef: 0.04, aggregation: "token-mean" },
    updates: { mini_batches: 1, epochs: 1, old_logprobs: "recompute" },
    rewards: { weights: { accuracy: 2, length: 1 }, invalid_action_penalty: 0 },
    evaluation: { benchmarks: ["validation"], n_samples: 16, every_steps: 10 },
  },
  /**
   * The CI end-to-end run: the refine recipe at the smallest size that still trains. 16 tokens
   * cut the embedded model's worked solutions short, so smoke checks the pipeline, not accuracy.
   */
  "smoke": {
    ...refine("dr-mas", "smoke"),
    tasks: { kind: "synthetic-math", difficulty: 1, splits: { train: 8, validation: 4, test: 4 } },
    workflow: { kind: "refine", max_loops: 2 },
    group_size: 2,
    batch_size: 1,
    steps: 2,
    sampling: { temperature: 1, top_p: 1, max_tokens: 16 },
    evaluation: { benchmarks: ["validation"], n_samples: 2, every_steps: 0 },
  },
};

/** One line per preset for `deno task train --help`: what a user gets from running it. */
export const PRESET_SUMMARIES: Readonly<Record<string, string>> = {
  "refine-drmas": "Dr. MAS math: solver + verifier refine loop, agent-wise normalization (default)",
  "refine-grpo": "refine math with GRPO's global baseline: the paper's comparison",
  "refine-drgrpo": "refine math with Dr. GRPO: no std in the advantage, constant loss normalizer",
  "search-drmas": "Dr. MAS search: verifier routes to searcher until the evidence suffices",
  "debate-mada": "MADA-RL: 3 generators, then 3 critics, one LoRA adapter per agent",
  "smoke": "checks the pipeline end to end in about a minute (2 steps, 16-token answers); it " +
    "does not learn: its accuracy and reward charts stay flat",
};

/**
 * What each preset follows, line by line where a script exists (the comments above cite the
 * lines): docs/CONFIG.md's preset table. Sizes (model, group size, batch, steps, tokens) are the
 * embedded model's everywhere; the reference sets everything else.
 */
export const PRESET_REFERENCES: Readonly<Record<string, string>> = {
  "refine-drmas":
    "Dr. MAS `examples/drmas_trainer/run_math.sh` and `verl/trainer/ppo/core_algos.py` " +
    "(langfengQ/DrMAS at 19c632b)",
  "refine-grpo": "Dr. MAS `examples/grpo_trainer/run_math.sh` (19c632b): `run_math.sh` without " +
    "`group_by_agent_id`",
  "refine-drgrpo": "`run_math.sh` with Dr. GRPO's advantage and loss (Liu et al. 2025; TRL's " +
    '`loss_type="dr_grpo"`, `scale_rewards=False`)',
  "search-drmas": "Dr. MAS `examples/drmas_trainer/run_search.sh` (19c632b), with veRL's actor " +
    "defaults where it sets none",
  "debate-mada": "the MADA-RL paper (Table 6 and Sec. 3; no code published), population sigma",
  "smoke": "none: `refine-drmas` at the smallest size that runs, for CI",
};

/** The preset used when neither a file nor a preset is named: the Dr. MAS refine recipe. */
export const DEFAULT_PRESET = "refine-drmas";

/** Names of all presets, sorted. */
export function presetNames(): string[] {
  return Object.keys(PRESETS).sort();
}

/**
 * The raw config of a preset (a fresh copy: safe to modify).
 *
 * @example
 * ```ts
 * import { parseConfig, presetInput } from "./mod.ts";
 * parseConfig({ ...presetInput("smoke"), seed: 3 });
 * ```
 */
export function presetInput(name: string): ExperimentConfigInput {
  const preset = PRESETS[name];
  if (!preset) {
    throw new ConfigError("presets", [{
      key: "preset",
      value: name,
      allowed: `one of ${presetNames().join(", ")}`,
    }]);
  }
  return structuredClone(preset);
}
