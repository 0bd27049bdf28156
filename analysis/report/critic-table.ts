import { mean, summarize } from "../stats/mod.ts";
import type { RunGroup } from "./group-runs.ts";

/** Critic effect of one debate round within one group, over the group's runs. */
export interface CriticRow {
  readonly kind: "critic-row";
  readonly group: string;
  readonly round: number;
  readonly runs: number;
  /** Wrong generator majority turned right: mean over runs, SEM null for one run. */
  readonly improvementRate: number;
  readonly improvementSem: number | null;
  /** Right generator majority turned wrong, mean over runs. */
  readonly degradationRate: number;
  /** Mean answer accuracy of the round, mean over runs. */
  readonly accuracy: number;
}

/**
 * Per group and critic round: improvement rate (mean ± SEM over runs), degradation rate and the
 * round's accuracy. Groups without debates contribute no rows.
 *
 * @example
 * ```ts
 * import { criticTable } from "./critic-table.ts";
 * import type { RunGroup } from "./group-runs.ts";
 * declare const groups: readonly RunGroup[];
 *
 * criticTable(groups).filter((r) => r.group === "mada_rl");
 * ```
 */
export function criticTable(groups: readonly RunGroup[]): CriticRow[] {
  return groups.flatMap((g) => {
    const rounds = [...new Set(g.runs.flatMap((r) => r.critic.map((c) => c.round)))].sort((a, b) =>
      a - b
    );
    return rounds.map((round) => {
      const effects = g.runs.flatMap((r) => r.critic.filter((c) => c.round === round));
      const improvement = effects.map((e) => e.improvementRate);
      return Object.freeze({
        kind: "critic-row",
        group: g.value,
        round,
        runs: effects.length,
        improvementRate: mean(improvement),
        improvementSem: improvement.length >= 2 ? summarize(improvement).sem : null,
        degradationRate: mean(effects.map((e) => e.degradationRate)),
        accuracy: mean(effects.map((e) => e.accuracy)),
      });
    });
  });
}
