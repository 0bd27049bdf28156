/**
 * What a cell's runs were evaluated on, by content: for each benchmark the distinct problem sets
 * (SHA-256 of the problems, as `run.started` records it) and the seeds that evaluated each. A cell
 * whose every seed evaluated the same problems has one set per benchmark; two cells share their
 * benchmark when they have the same single set for every benchmark.
 */
import type { RunBenchmark } from "./study-data.ts";

/** One problem set of a benchmark and the runs (by seed) evaluated on it. */
export interface ProblemSet {
  readonly sha256: string;
  readonly problems: number;
  readonly seeds: readonly number[];
}

/** One benchmark a cell was evaluated on, over its runs. */
export interface CellBenchmark {
  /** The name its evaluations carry ("validation", a file's base name). */
  readonly name: string;
  /** Its distinct problem sets, in seed order of first use: one when every seed shared it. */
  readonly sets: readonly ProblemSet[];
}

/** The hex digits of a SHA-256 the report's tables print; study.json keeps the whole hash. */
export const SHORT_HASH = 12;

/**
 * A hash as the tables print it: its first {@link SHORT_HASH} hex digits.
 *
 * @example
 * ```ts
 * shortHash("9f2c0e5d1a7b3c4d5e6f..."); // "9f2c0e5d1a7b"
 * ```
 */
export function shortHash(sha256: string): string {
  return sha256.slice(0, SHORT_HASH);
}

/**
 * The benchmarks of a cell's runs (each with its seed and recorded benchmarks), sorted by name;
 * empty when no run recorded one (runs recorded before benchmark identities).
 *
 * @example
 * ```ts
 * cellBenchmarks([
 *   { seed: 0, benchmarks: { validation: { problems: 64, sha256: "ab" } } },
 *   { seed: 1, benchmarks: { validation: { problems: 64, sha256: "ab" } } },
 * ]); // [{ name: "validation", sets: [{ sha256: "ab", problems: 64, seeds: [0, 1] }] }]
 * ```
 */
export function cellBenchmarks(
  runs: readonly {
    readonly seed: number;
    readonly benchmarks: Readonly<Record<string, RunBenchmark>>;
  }[],
): CellBenchmark[] {
  const byName = new Map<string, Map<string, { problems: number; seeds: number[] }>>();
  for (const run of [...runs].sort((a, b) => a.seed - b.seed)) {
    for (const [name, b] of Object.entries(run.benchmarks)) {
      const sets = byName.get(name) ?? new Map();
      const set = sets.get(b.sha256) ?? { problems: b.problems, seeds: [] };
      set.seeds.push(run.seed);
      sets.set(b.sha256, set);
      byName.set(name, sets);
    }
  }
  return [...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, sets]) => ({
    name,
    sets: [...sets].map(([sha256, s]) => ({ sha256, problems: s.problems, seeds: s.seeds })),
  }));
}

/**
 * Whether every run of both cells was evaluated on the same problems: true when each cell has
 * one problem set per benchmark and the two cells have the same benchmarks and sets; false when
 * they differ (or a cell's seeds evaluated different problems); null when either cell recorded
 * none (runs pending, or recorded before benchmark identities).
 *
 * @example
 * ```ts
 * const a = [{ name: "validation", sets: [{ sha256: "ab", problems: 64, seeds: [0, 1] }] }];
 * sameBenchmark(a, a); // true
 * sameBenchmark(a, []); // null
 * ```
 */
export function sameBenchmark(
  a: readonly CellBenchmark[],
  b: readonly CellBenchmark[],
): boolean | null {
  if (a.length === 0 || b.length === 0) return null;
  const key = (bs: readonly CellBenchmark[]) =>
    bs.some((x) => x.sets.length !== 1)
      ? null
      : JSON.stringify(bs.map((x) => [x.name, x.sets[0].sha256]));
  const [x, y] = [key(a), key(b)];
  return x !== null && x === y;
}

/**
 * The benchmarks as a table cell: each name with its problem set's short hash and size, or how
 * many sets its seeds drew; "not recorded" without any.
 *
 * @example
 * ```ts
 * benchmarkText([{ name: "validation", sets: [{ sha256: "9f2c0e5d1a7b3c", problems: 64, seeds: [0] }] }]);
 * // "validation 9f2c0e5d1a7b (64 problems)"
 * ```
 */
export function benchmarkText(benchmarks: readonly CellBenchmark[]): string {
  if (benchmarks.length === 0) return "not recorded";
  return benchmarks.map((b) =>
    b.sets.length === 1
      ? `${b.name} ${shortHash(b.sets[0].sha256)} (${b.sets[0].problems} problems)`
      : `${b.name}: ${b.sets.length} problem sets (${
        b.sets.map((s) => `seeds ${s.seeds.join(", ")}: ${shortHash(s.sha256)}`).join("; ")
      })`
  ).join("; ");
}
