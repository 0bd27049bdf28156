import { requireCount, StatsInputError } from "./stats-input-error.ts";
import { passAtK } from "./pass-at-k.ts";

/** One evaluated problem: n sampled answers, c of them correct. */
export interface ProblemTally {
  readonly n: number;
  readonly c: number;
}

function checkTallies(problems: readonly ProblemTally[]): void {
  if (problems.length === 0) throw new StatsInputError("problems", 0, "need at least one problem");
  problems.forEach((p, i) => {
    requireCount(`problems[${i}].n`, p.n);
    requireCount(`problems[${i}].c`, p.c);
    if (p.n === 0) throw new StatsInputError(`problems[${i}].n`, 0, "a problem needs a sample");
    if (p.c > p.n) throw new StatsInputError(`problems[${i}].c`, p.c, `exceeds n = ${p.n}`);
  });
}

/**
 * avg@k: mean over problems of the per-problem accuracy c/n (with n = k samples each, as in the
 * Dr. MAS tables). Problems with different n are each weighted once.
 *
 * @example
 * ```ts
 * avgAtK([{ n: 4, c: 1 }, { n: 4, c: 3 }]); // 0.5
 * ```
 */
export function avgAtK(problems: readonly ProblemTally[]): number {
  checkTallies(problems);
  return problems.reduce((s, p) => s + p.c / p.n, 0) / problems.length;
}

/**
 * Mean unbiased pass@k over problems.
 *
 * @example
 * ```ts
 * meanPassAtK([{ n: 4, c: 0 }, { n: 4, c: 1 }], 4); // 0.5
 * ```
 */
export function meanPassAtK(problems: readonly ProblemTally[], k: number): number {
  checkTallies(problems);
  return problems.reduce((s, p) => s + passAtK(p.n, p.c, k), 0) / problems.length;
}
