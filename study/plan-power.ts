/**
 * The power analysis of a grid before it runs (`deno task study power`): every claim of the
 * grid, with the per-seed spread of an earlier study's results (study.json) for its cells, at the
 * grid's seeds and evaluation sizes (or the ones asked for), so that seeds, validation sizes and
 * samples can be chosen before the results exist. Where the earlier runs of a claim's two cells
 * pair by seed (study/pairing.ts), the paired test's power is planned beside Welch's, from the
 * spread of their per-seed differences.
 */
import { type ClaimPower, claimPower, type EvaluationSize } from "./claim-power.ts";
import { evaluationSize } from "./evaluation-size.ts";
import { ONE_CELL_EXPECTATIONS } from "./grid-schema.ts";
import type { Grid, GridCell } from "./load-grid.ts";
import { pairingOf, sampleSeeds } from "./pairing.ts";
import {
  type CellResult,
  claimAgents,
  type ClaimIdentity,
  claimSamples,
  type StudyResults,
} from "./study-results.ts";

/** Changes to the grid's design to evaluate. */
export interface PowerPlan {
  /** Seeds per cell (default: the grid's). */
  readonly seeds?: number;
  /** Problems each run's final evaluation averages over, for every cell (default: the configs'). */
  readonly problems?: number;
  /** Samples per problem, for every cell (default: the configs'). */
  readonly samples?: number;
}

/** One claim of the grid (per agent for agent metrics) with its power. */
export interface PowerRow extends ClaimIdentity {
  readonly comparison: string;
  readonly power: ClaimPower;
}

function plannedSize(cell: GridCell, plan: PowerPlan): EvaluationSize {
  const size = evaluationSize(cell.config);
  return {
    problems: plan.problems ?? size.problems,
    samples: plan.samples ?? size.samples,
  };
}

function observedSize(cell: CellResult): EvaluationSize {
  return { problems: cell.problems, samples: cell.k };
}

function missing(seeds: number, grid: Grid, note: string): ClaimPower {
  return {
    seeds,
    alpha: grid.alpha,
    power: grid.power,
    spread: [],
    mde: null,
    mdeLow: null,
    paperEffect: null,
    powerAtPaper: null,
    seedsNeeded: null,
    note,
    paired: null,
  };
}

/**
 * The power of every claim of `grid` from the per-seed values in `earlier`.
 *
 * @example
 * ```ts
 * import { loadGrid, readStudyResults } from "./mod.ts";
 * const earlier = await readStudyResults("docs/study/study.json");
 * const rows = planPower(await loadGrid("study/grid.json"), earlier, { seeds: 10, problems: 64 });
 * rows.map((r) => [r.cell, r.power.mde, r.power.seedsNeeded]);
 * ```
 */
export function planPower(grid: Grid, earlier: StudyResults, plan: PowerPlan = {}): PowerRow[] {
  const seeds = plan.seeds ?? grid.seeds;
  const gridCells = new Map(grid.cells.map((c) => [c.id, c]));
  const results = new Map(earlier.cells.map((c) => [c.id, c]));
  return grid.comparisons.flatMap((comparison) =>
    comparison.claims.flatMap((claim): PowerRow[] => {
      const oneCell = ONE_CELL_EXPECTATIONS.includes(claim.expect);
      const against = oneCell ? null : claim.against ?? comparison.baseline;
      const ids = [claim.cell, ...(against === null ? [] : [against])];
      const base = {
        comparison: comparison.id,
        cell: claim.cell,
        against,
        metric: claim.metric,
        expect: claim.expect,
        paper: claim.paper,
      };
      const absent = ids.filter((id) => !results.has(id));
      if (absent.length > 0) {
        const note = `no earlier runs of ${absent.join(", ")} in the results file`;
        return [{ ...base, agent: null, power: missing(seeds, grid, note) }];
      }
      const sides = ids.map((id) => results.get(id)!);
      const agents = claimAgents(claim, sides);
      return agents.map((agent) => {
        const side = (c: CellResult) => {
          const values = claimSamples(c, claim.metric, agent).samples;
          const multiple = earlier.spikeMultiple ?? grid.spike_multiple;
          return {
            cell: c.id,
            values,
            seeds: sampleSeeds(c, claim.metric, agent, values, multiple),
            observed: observedSize(c),
            planned: plannedSize(gridCells.get(c.id)!, plan),
          };
        };
        const [a, b] = sides.map(side);
        const paired = b !== undefined &&
          pairingOf(
            claim.metric,
            { cell: sides[0], values: a.values, seeds: a.seeds },
            { cell: sides[1], values: b.values, seeds: b.seeds },
          ).paired;
        return {
          ...base,
          agent,
          power: claimPower({
            metric: claim.metric,
            expect: claim.expect,
            paperEffect: claim.paper_effect ?? null,
            cell: a,
            reference: b ?? null,
            paired,
            seeds,
            alpha: grid.alpha,
            power: grid.power,
          }),
        };
      });
    })
  );
}
