import { StatsInputError } from "./stats-input-error.ts";
import { summarize } from "./mean-sem.ts";
import { type TTest, tTest } from "./student-t.ts";

/** Summary of one group as papers print it: mean, standard error of the mean, count. */
export interface GroupSummary {
  readonly mean: number;
  readonly sem: number;
  readonly n: number;
}

/**
 * Welch's unequal-variance t-test of mean(a) - mean(b): `se` is sqrt(sem_a^2 + sem_b^2), `df`
 * the Welch–Satterthwaite degrees of freedom.
 */
export interface WelchResult extends TTest {
  readonly kind: "welch";
}

function checkGroup(name: string, g: GroupSummary): void {
  if (!Number.isInteger(g.n) || g.n < 2) {
    throw new StatsInputError(
      `${name}.n`,
      g.n,
      "Welch's test needs at least 2 observations per group (the variance is undefined)",
    );
  }
  if (!Number.isFinite(g.mean)) throw new StatsInputError(`${name}.mean`, g.mean, "not finite");
  if (!(g.sem >= 0) || !Number.isFinite(g.sem)) {
    throw new StatsInputError(`${name}.sem`, g.sem, "must be a finite number >= 0");
  }
}

/**
 * Welch's t-test from summary statistics (mean, SEM, n per group): for checking a paper's table.
 * Zero variance in both groups follows scipy: df is taken as 1, t is ±Infinity (p = 0) when the
 * means differ and NaN (p = NaN) when they are equal; the interval collapses to the difference.
 *
 * @example
 * ```ts
 * welchFromSummary({ mean: 41.9, sem: 0.3, n: 10 }, { mean: 39.9, sem: 0.4, n: 10 }).p;
 * ```
 */
export function welchFromSummary(
  a: GroupSummary,
  b: GroupSummary,
  level = 0.95,
): WelchResult {
  checkGroup("a", a);
  checkGroup("b", b);
  if (!(level > 0 && level < 1)) throw new StatsInputError("level", level, "must lie in (0, 1)");
  const va = a.sem ** 2;
  const vb = b.sem ** 2;
  const se = Math.sqrt(va + vb);
  const diff = a.mean - b.mean;
  const dfRaw = (va + vb) ** 2 / (va ** 2 / (a.n - 1) + vb ** 2 / (b.n - 1));
  const df = Number.isNaN(dfRaw) ? 1 : dfRaw;
  return Object.freeze({ kind: "welch", ...tTest(diff, se, df, level) });
}

/**
 * Welch's t-test from raw samples (e.g. per-seed accuracies of two configurations).
 *
 * @example
 * ```ts
 * const r = welchFromSamples([0.41, 0.43, 0.42], [0.39, 0.40, 0.38]);
 * r.t; r.df; r.p; r.ci;
 * ```
 */
export function welchFromSamples(
  a: readonly number[],
  b: readonly number[],
  level = 0.95,
): WelchResult {
  const sa = summarize(a, "a");
  const sb = summarize(b, "b");
  return welchFromSummary(sa, sb, level);
}
