/**
 * Benchmark files from a user's disk (MATH-500, AIME, AMC, Minerva; JSONL, JSON, Parquet).
 *
 * @example
 * ```ts
 * import { loadBenchmark } from "./mod.ts";
 * const problems = await loadBenchmark("aime24.parquet");
 * ```
 */
export {
  BenchmarkFileError,
  type BenchmarkProblem,
  lastBoxed,
  loadBenchmark,
  recordToProblem,
} from "./load-benchmark.ts";
