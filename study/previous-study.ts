/**
 * How this study's verdicts moved since an earlier study of the same claims (the grid's
 * `previous`): each earlier claim matched to this one's by cell, compared cell, agent, metric and
 * expectation, with what changed in the two cells' setups. The grid states the changes no setup
 * shows (the estimator fix, a new base model) and, per claim, why its verdict moved.
 */
import type { Verdict } from "./claims.ts";
import { ONE_CELL_EXPECTATIONS } from "./grid-schema.ts";
import type { Grid } from "./load-grid.ts";
import type { CellResult, ClaimIdentity, ClaimResult, StudyResults } from "./study-results.ts";

/** One claim's verdict in one study. */
export interface ClaimOutcome {
  readonly verdict: Verdict;
  /** Cell minus reference (or minus 1), null when untested. */
  readonly diff: number | null;
  readonly p: number | null;
  /** Samples per problem of the tested cell (the k of avg@k, pass@k). */
  readonly k: number;
}

/** One claim of the earlier study, or one new in this study. */
export interface ClaimChange extends ClaimIdentity {
  readonly kind: "claim-change";
  /** Null for a claim the earlier study did not make. */
  readonly before: ClaimOutcome | null;
  /** Null for an earlier claim this grid no longer makes. */
  readonly after: ClaimOutcome | null;
  /** Both studies reached a verdict (not testable included) and the verdicts differ. */
  readonly changed: boolean;
  /** The setup lines of the claim's cells that differ, and the seeds if they do. */
  readonly setup: readonly string[];
  /** The grid's explanation of this claim's change (`since_previous`), if any. */
  readonly note: string | null;
}

/** The comparison with the earlier study. */
export interface PreviousStudy {
  readonly kind: "previous-study";
  readonly title: string;
  /** The earlier study.json, relative to the working directory. */
  readonly file: string;
  /** Changes the grid states for every cell (code, models). */
  readonly changes: readonly string[];
  readonly claims: readonly ClaimChange[];
}

function keyOf(c: ClaimIdentity): string {
  return JSON.stringify([c.cell, c.against, c.agent, c.metric, c.expect]);
}

function outcome(c: ClaimResult, cells: ReadonlyMap<string, CellResult>): ClaimOutcome {
  return {
    verdict: c.verdict,
    diff: c.test?.diff ?? null,
    p: c.test === null || Number.isNaN(c.test.p) ? null : c.test.p,
    k: cells.get(c.cell)?.k ?? 0,
  };
}

/** `cell field: before → after` for each setup field that differs, then the seeds. */
function setupChanges(
  ids: readonly string[],
  before: StudyResults,
  after: StudyResults,
): string[] {
  const lines: string[] = [];
  for (const id of ids) {
    const was = before.cells.find((c) => c.id === id)?.setup;
    const now = after.cells.find((c) => c.id === id)?.setup;
    if (!was || !now) continue;
    for (const field of Object.keys(now) as (keyof typeof now)[]) {
      // A field the earlier study did not record (v1's updates) is not a change it shows.
      if (was[field] === undefined) continue;
      if (String(was[field]) !== String(now[field])) {
        lines.push(`${id} ${field}: ${was[field]} → ${now[field]}`);
      }
    }
  }
  if (before.seeds !== after.seeds) lines.push(`seeds: ${before.seeds} → ${after.seeds}`);
  return lines;
}

/**
 * Matches the earlier study's claims with this one's: every earlier claim (changed or not, or
 * dropped), then the claims new in this study.
 *
 * @example
 * ```ts
 * import { loadGrid, readStudyResults, type StudyResults } from "./mod.ts";
 * declare const results: StudyResults;
 * const grid = await loadGrid("study/grid.json");
 * const moved = previousStudy(results, await readStudyResults("docs/study/v1/study.json"),
 *   "docs/study/v1/study.json", grid).claims.filter((c) => c.changed);
 * ```
 */
export function previousStudy(
  current: StudyResults,
  previous: StudyResults,
  file: string,
  grid: Pick<Grid, "previous" | "comparisons">,
): PreviousStudy {
  const notes = new Map<string, string>();
  for (const comparison of grid.comparisons) {
    for (const claim of comparison.claims) {
      if (claim.since_previous === undefined) continue;
      const oneCell = ONE_CELL_EXPECTATIONS.includes(claim.expect);
      notes.set(
        JSON.stringify([
          claim.cell,
          oneCell ? null : claim.against ?? comparison.baseline,
          claim.metric,
          claim.expect,
        ]),
        claim.since_previous,
      );
    }
  }
  const noteOf = (c: ClaimIdentity) =>
    notes.get(JSON.stringify([c.cell, c.against, c.metric, c.expect])) ?? null;
  const claimsOf = (r: StudyResults) => r.comparisons.flatMap((c) => c.claims);
  const cellsOf = (r: StudyResults) => new Map(r.cells.map((c) => [c.id, c]));
  const [beforeCells, afterCells] = [cellsOf(previous), cellsOf(current)];
  const now = new Map(claimsOf(current).map((c) => [keyOf(c), c]));
  const seen = new Set<string>();
  const row = (was: ClaimResult | null, is: ClaimResult | null): ClaimChange => {
    const c = (is ?? was)!;
    const before = was && outcome(was, beforeCells);
    const after = is && outcome(is, afterCells);
    // A verdict that became (or stopped being) "not testable" moved too: v1's verifier spikes
    // agreed, and after the estimator fix neither cell spikes at all.
    const decided = (o: ClaimOutcome | null) => o !== null && o.verdict !== "pending";
    return {
      kind: "claim-change",
      cell: c.cell,
      against: c.against,
      agent: c.agent,
      metric: c.metric,
      expect: c.expect,
      paper: c.paper,
      before,
      after,
      changed: decided(before) && decided(after) && before!.verdict !== after!.verdict,
      setup: was && is
        ? setupChanges([c.cell, ...(c.against ? [c.against] : [])], previous, current)
        : [],
      note: noteOf(c),
    };
  };
  const earlier = claimsOf(previous).map((was) => {
    const key = keyOf(was);
    seen.add(key);
    return row(was, now.get(key) ?? null);
  });
  const added = claimsOf(current).filter((c) => !seen.has(keyOf(c))).map((is) => row(null, is));
  return {
    kind: "previous-study",
    title: grid.previous!.title,
    file,
    changes: grid.previous!.changes,
    claims: [...earlier, ...added],
  };
}
