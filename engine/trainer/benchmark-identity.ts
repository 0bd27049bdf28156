/**
 * What a run is evaluated on, by content: each benchmark's problem count and the SHA-256 of its
 * problems (id, problem, answer, in order, canonical JSON). Recorded in `run.started`, so two
 * runs' evaluations can be told to be on the same problems (a paired comparison needs it) without
 * trusting a file name or a seed.
 */
import { encodeCanonical, sha256Hex } from "../../events/mod.ts";
import type { Question } from "../workflows/mod.ts";
import type { TaskSource } from "./rollout/mod.ts";

/** One benchmark's identity. */
export interface BenchmarkIdentity {
  readonly problems: number;
  readonly sha256: string;
}

/** The name a benchmark's `evaluation.completed` carries: the file name without extension. */
export function benchmarkName(benchmark: string): string {
  const base = benchmark.split("/").pop()!;
  return base.replace(/\.(jsonl|json|parquet)$/i, "");
}

/** The questions an evaluation entry names: a split of the tasks, or a loaded benchmark file. */
export function benchmarkQuestions(
  tasks: TaskSource,
  benchmark: string,
): readonly Question[] | undefined {
  if (benchmark === "validation") return tasks.validation;
  if (benchmark === "test") return tasks.test;
  return tasks.benchmarks.get(benchmark);
}

/**
 * Every evaluated benchmark's identity, by the name its `evaluation.completed` carries.
 *
 * @example
 * ```ts
 * import { benchmarkIdentities } from "./benchmark-identity.ts";
 * import type { TaskSource } from "./rollout/mod.ts";
 * declare const tasks: TaskSource;
 * benchmarkIdentities(["validation"], tasks); // { validation: { problems: 16, sha256: "9f2c..." } }
 * ```
 */
export function benchmarkIdentities(
  benchmarks: readonly string[],
  tasks: TaskSource,
): Record<string, BenchmarkIdentity> {
  const identities: Record<string, BenchmarkIdentity> = {};
  for (const benchmark of benchmarks) {
    const questions = benchmarkQuestions(tasks, benchmark) ?? [];
    const problems = questions.map((q) => ({ id: q.id, problem: q.problem, answer: q.answer }));
    identities[benchmarkName(benchmark)] = Object.freeze({
      problems: questions.length,
      sha256: sha256Hex(encodeCanonical(problems).json),
    });
  }
  return identities;
}
