/**
 * The questions a run trains and evaluates on, from the config's `tasks`: generated arithmetic,
 * the generated search world (with its retriever), or benchmark files from disk.
 */
import { bm25Retriever } from "../../../adapters/search/mod.ts";
import type { NormalizedConfig } from "../../config/mod.ts";
import { generateArithmeticTasks, generateSearchWorld, loadBenchmark } from "../../tasks/mod.ts";
import type { Question, Retriever } from "../../workflows/mod.ts";

/**
 * Questions per split, the evaluation's benchmark files (by the path the config names, read once)
 * and, for search tasks, the retriever over the world's documents.
 */
export interface TaskSource {
  readonly train: readonly Question[];
  readonly validation: readonly Question[];
  readonly test: readonly Question[];
  readonly benchmarks: ReadonlyMap<string, readonly Question[]>;
  readonly retriever?: Retriever;
}

/** The questions of a benchmark file (JSONL, JSON or Parquet). */
export async function loadQuestions(path: string): Promise<Question[]> {
  return (await loadBenchmark(path)).map((p) => ({
    id: p.id,
    problem: p.problem,
    answer: p.answer,
  }));
}

/** Reads the benchmark files an evaluation names (every entry but the splits). */
export async function loadBenchmarkFiles(
  entries: readonly string[],
): Promise<Map<string, readonly Question[]>> {
  const files = new Map<string, readonly Question[]>();
  for (const entry of entries) {
    if (entry !== "validation" && entry !== "test" && !files.has(entry)) {
      files.set(entry, await loadQuestions(entry));
    }
  }
  return files;
}

/**
 * Builds the task source of a config (deterministic from `tasks.seed` for generated tasks).
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { taskSource } from "./task-source.ts";
 *
 * declare const config: NormalizedConfig;
 * const tasks = await taskSource(config);
 * tasks.train[0].problem; // the first training question's text
 * ```
 */
export async function taskSource(config: NormalizedConfig): Promise<TaskSource> {
  const benchmarks = await loadBenchmarkFiles(config.evaluation.benchmarks);
  return { ...await splits(config), benchmarks };
}

async function splits(config: NormalizedConfig): Promise<Omit<TaskSource, "benchmarks">> {
  const t = config.tasks;
  switch (t.kind) {
    case "synthetic-math": {
      const split = (name: "train" | "validation" | "test") =>
        generateArithmeticTasks({
          seed: t.seed,
          difficulty: t.difficulty,
          split: name,
          count: t.splits[name],
        }).map((task) => ({ id: task.id, problem: task.problem, answer: task.answer }));
      return { train: split("train"), validation: split("validation"), test: split("test") };
    }
    case "synthetic-search": {
      const world = generateSearchWorld({
        seed: t.seed,
        splits: t.splits,
        documents: t.documents,
        maxHops: t.max_hops,
        minHops: t.min_hops,
      });
      const split = (name: string) =>
        world.tasks.filter((q) => q.split === name).map((q) => ({
          id: q.id,
          problem: q.problem,
          answer: q.answer,
        }));
      return {
        train: split("train"),
        validation: split("validation"),
        test: split("test"),
        retriever: bm25Retriever(world.documents),
      };
    }
    case "math-files": {
      const load = async (path: string | undefined) => path ? await loadQuestions(path) : [];
      return {
        train: await load(t.train),
        validation: await load(t.validation),
        test: await load(t.test),
      };
    }
  }
}
