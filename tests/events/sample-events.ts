/**
 * Realistic run events for tests and benchmarks: turn events of 1-4 KB (token ids, logprobs and
 * text sized like a short math rollout), drawn from a seeded generator so every run builds the
 * same bytes.
 */
import { hashConfig, type NewEvent } from "../../events/mod.ts";
import { mulberry32 as seeded } from "../support/mulberry32.ts";
export { mulberry32 as seeded } from "../support/mulberry32.ts";

const WORDS = "the solver adds both sides then checks the remainder so the answer is".split(" ");

/** Coordinates of a turn within a step. */
export interface TurnAt {
  step: number;
  prompt: number;
  sample: number;
  turn: number;
}

/** A turn.generated event whose canonical size is about 1-4 KB. */
export function turnEvent(at: TurnAt, rand: () => number = seeded(at.turn + 1)): NewEvent {
  const promptLen = 60 + Math.floor(rand() * 200);
  const responseLen = 30 + Math.floor(rand() * 150);
  const promptTokens = new Int32Array(promptLen);
  for (let i = 0; i < promptLen; i++) promptTokens[i] = Math.floor(rand() * 32000);
  const responseTokens = new Int32Array(responseLen);
  const logprobs = new Float32Array(responseLen);
  for (let i = 0; i < responseLen; i++) {
    responseTokens[i] = Math.floor(rand() * 32000);
    logprobs[i] = Math.log(rand() + 1e-9);
  }
  const text = Array.from({ length: responseLen }, () => WORDS[Math.floor(rand() * WORDS.length)])
    .join(" ");
  return {
    type: "turn.generated",
    data: {
      step: at.step,
      phase: "rollout",
      trajectory: `s${at.step}-p${at.prompt}-k${at.sample}`,
      prompt: at.prompt,
      sample: at.sample,
      turn: at.turn,
      agent: at.turn % 2 === 0 ? "solver" : "verifier",
      role: at.turn % 2 === 0 ? "solver" : "verifier",
      workerGroup: "wg0",
      promptTokens,
      responseTokens,
      logprobs,
      finishReason: "stop",
      parsedAnswer: String(Math.floor(rand() * 100)),
      correct: rand() < 0.5,
      text,
    },
  };
}

/** A step.started event. */
export function stepEvent(step: number): NewEvent {
  return {
    type: "step.started",
    data: { step, groupSize: 2, prompts: [{ prompt: 0, problemId: `gsm8k/${step}` }] },
  };
}

/** A run.started event with a consistent config hash. */
export function runStartedEvent(seed = 7): NewEvent {
  const config = { model: "tiny", lr: 1e-5, agents: ["solver", "verifier"], groupSize: 8 };
  return {
    type: "run.started",
    data: {
      config,
      configHash: hashConfig(config),
      seed,
      codeVersion: "test",
      runtime: {
        deno: Deno.version.deno,
        v8: Deno.version.v8,
        typescript: Deno.version.typescript,
        onnxruntime: null,
        executionProvider: "cpu",
        adapter: null,
        threads: 1,
        os: Deno.build.os,
        arch: Deno.build.arch,
      },
    },
  };
}
