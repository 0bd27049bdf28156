/**
 * What else differs between the groups a report compares: every flattened config key, other than
 * the grouping key, whose values are not the same between two groups. A comparison between groups
 * that differ in such a key is confounded: its difference is not the grouping key's alone.
 */
import type { RunGroup } from "./group-runs.ts";
import type { ConfigValue } from "./run-summary.ts";

/**
 * Keys that do not change what a run computes, or vary by design within every group: the run's
 * label, its store, and the seed (the groups' seeds are the pairing of a paired test, and runs
 * with other seeds are the replicates Welch's test needs).
 */
const NOT_A_SETTING = new Set(["name", "store", "seed"]);

/** One key whose values differ between groups: the sorted values each group's runs have. */
export interface ConfigDifference {
  readonly key: string;
  /** group value -> the distinct values of `key` among its runs ("(absent)" where missing) */
  readonly values: Readonly<Record<string, readonly string[]>>;
}

const ABSENT = "(absent)";

function valuesOf(group: RunGroup, key: string): string[] {
  const text = (v: ConfigValue | undefined) => v === undefined ? ABSENT : String(v);
  return [...new Set(group.runs.map((r) => text(r.config[key])))].sort();
}

const sameValues = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

/**
 * The keys whose values differ between at least two of the groups, sorted by key.
 *
 * @example
 * ```ts
 * import { configDifferences } from "./config-differences.ts";
 * import { groupRuns } from "./group-runs.ts";
 * import type { RunSummary } from "./run-summary.ts";
 * declare const runs: readonly RunSummary[];
 *
 * configDifferences(groupRuns(runs, "estimator.kind"), "estimator.kind");
 * // [{ key: "agents.0.trainable.rank", values: { grpo: ["8"], rloo: ["16"] } }]
 * ```
 */
export function configDifferences(
  groups: readonly RunGroup[],
  groupBy: string,
): ConfigDifference[] {
  const keys = new Set(groups.flatMap((g) => g.runs.flatMap((r) => Object.keys(r.config))));
  return [...keys].filter((k) => k !== groupBy && !NOT_A_SETTING.has(k)).sort().flatMap((key) => {
    const values = groups.map((g) => valuesOf(g, key));
    if (values.every((v) => sameValues(v, values[0]))) return [];
    return [{
      key,
      values: Object.freeze(Object.fromEntries(groups.map((g, i) => [g.value, values[i]]))),
    }];
  });
}

/** The keys of `differences` in which groups `a` and `b` differ. */
export function confoundsBetween(
  differences: readonly ConfigDifference[],
  a: string,
  b: string,
): string[] {
  return differences.filter((d) => !sameValues(d.values[a] ?? [], d.values[b] ?? []))
    .map((d) => d.key);
}
