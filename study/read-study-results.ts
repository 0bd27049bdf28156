/**
 * Reads a study's results back from its study.json, for the power analysis of a grid before it
 * runs and for re-rendering a committed report. Files written before a field existed are
 * completed: a cell's evaluated problems from its setup text, each claim's power from its
 * per-seed values and the grid's paper effects, each two-cell claim's pairing by seed and paired
 * test from its per-seed values, and its verdict by the current rule (the paired test's where the
 * design is paired).
 */
import { dirname, relative, resolve } from "node:path";
import { z } from "zod";
import { SPIKE_MULTIPLE } from "../analysis/mod.ts";
import type { Grid } from "./load-grid.ts";
import type { DifferenceTest, Verdict, VerdictTest } from "./claims.ts";
import { planPower } from "./plan-power.ts";
import { type PreviousStudy, previousStudy } from "./previous-study.ts";
import { StudyError } from "./study-error.ts";
import {
  type CellResult,
  type ClaimResult,
  powerOfClaim,
  type StudyResults,
  withClaimTests,
} from "./study-results.ts";

/** The results file cannot be read (absent, a folder, no permission): the invocation must change. */
export class MissingResultsError extends StudyError {
  override name = "MissingResultsError";
}

const finiteList = z.array(z.number());
const stat = z.looseObject({ samples: finiteList });
const agent = z.looseObject({
  agent: z.string(),
  maxOverMedian: stat,
  spikesPerRun: stat,
  multiplier: stat,
});
const cell = z.looseObject({
  id: z.string(),
  k: z.number().int().min(1),
  problems: z.number().int().min(0).nullable().optional(),
  setup: z.looseObject({ tasks: z.string(), evaluation: z.string() }),
  accuracy: z.looseObject({ avg: stat, pass: stat }),
  agents: z.array(agent),
  critic: z.array(z.looseObject({ round: z.number(), improvement: stat })),
});
const claim = z.looseObject({
  cell: z.string(),
  against: z.string().nullable(),
  agent: z.string().nullable(),
  metric: z.string(),
  expect: z.string(),
  value: stat.nullable(),
  reference: stat.nullable(),
});
const results = z.looseObject({
  kind: z.literal("study-results"),
  seeds: z.number().int().min(1),
  alpha: z.number(),
  cells: z.array(cell),
  comparisons: z.array(z.looseObject({ id: z.string(), claims: z.array(claim) })),
});

/**
 * Problems per run of an older study.json's cell, from its setup text ("…, 16 validation, 64 test
 * problems" and "validation × 16 samples per problem"); null when it evaluated files.
 */
function problemsFromSetup(setup: { tasks: string; evaluation: string }): number | null {
  const benchmarks = setup.evaluation.split(" × ")[0].split(", ");
  const sizes = benchmarks.map((b) => {
    const m = (b === "validation" || b === "test")
      ? new RegExp(`(\\d+) ${b}\\b`).exec(setup.tasks)
      : null;
    return m ? Number(m[1]) : null;
  });
  return sizes.some((x) => x === null) ? null : sizes.reduce((s: number, x) => s + x!, 0);
}

/**
 * Reads and checks a study.json; throws StudyError naming the file, the problem and the fix.
 *
 * @example
 * ```ts
 * const earlier = await readStudyResults("docs/study/study.json");
 * ```
 */
export async function readStudyResults(file: string): Promise<StudyResults> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    throw new MissingResultsError(
      `cannot read the study results ${file} (${(e as Error).message}); run the study first ` +
        `(deno task study), or name an existing study.json with --from FILE`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new StudyError(
      `${file} is not JSON (${(e as Error).message}); regenerate it with ` +
        `deno task study --report-only, or restore it from git`,
    );
  }
  const parsed = results.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new StudyError(
      `${file} is not a study's results: at ${issue.path.join(".") || "(top)"}: ` +
        `${issue.message}; give the study.json that deno task study writes`,
    );
  }
  const data = json as StudyResults;
  // JSON has no NaN: an undefined test statistic (no spread on either side) was written as null.
  const nan = (x: number | null) => x ?? NaN;
  const numbers = <T extends { t: number; df: number; p: number }>(test: T | null) =>
    test === null ? null : { ...test, t: nan(test.t), df: nan(test.df), p: nan(test.p) };
  const cells: CellResult[] = data.cells.map((c) => ({
    ...c,
    problems: c.problems ?? problemsFromSetup(c.setup),
    // Written before start runs, benchmark hashes and presets were reported (v1, v2).
    start: c.start ?? null,
    benchmarks: c.benchmarks ?? [],
    follows: c.follows ?? null,
    config: c.config ?? null,
  }));
  const byId = new Map(cells.map((c) => [c.id, c]));
  const comparisons = data.comparisons.map((c) => ({
    ...c,
    claims: c.claims.map((claim): ClaimResult => {
      const read = {
        ...claim,
        test: numbers(claim.test),
        sameBenchmark: claim.sameBenchmark ?? null,
      };
      // Written before claims were paired: pair and test them now from the per-seed values.
      if (read.decidedBy === undefined) {
        return withClaimTests(read, byId, data.alpha, data.spikeMultiple ?? SPIKE_MULTIPLE);
      }
      return { ...read, paired: numbers(read.paired ?? null) };
    }),
  }));
  return { ...data, cells, comparisons, previous: completedPrevious(data.previous ?? null) };
}

/** An earlier study's comparison as a file stores it, with the fields added since completed. */
function completedPrevious(p: PreviousStudy | null): PreviousStudy | null {
  if (p === null) return null;
  return {
    ...p,
    seeds: p.seeds ?? null,
    setupChanges: p.setupChanges ?? [],
    claims: p.claims.map((c) => ({
      ...c,
      causes: c.causes ?? [],
      setupChanges: c.setupChanges ?? [],
      notRerun: c.notRerun ?? [],
    })),
  };
}

/**
 * A study's results with each claim's verdict and Welch test as its file states them:
 * readStudyResults decides the claims of a file written before paired tests anew (the paired
 * test's verdict where the design is paired), while a comparison with that study must start from
 * the verdicts it published (Welch's).
 *
 * @example
 * ```ts
 * const v2 = await readPublishedResults("docs/study/v2/study.json");
 * v2.comparisons[0].claims[0].decidedBy; // "welch"
 * ```
 */
export async function readPublishedResults(file: string): Promise<StudyResults> {
  const r = await readStudyResults(file);
  const raw = JSON.parse(await Deno.readTextFile(file)) as {
    comparisons: {
      claims: { verdict: Verdict; decidedBy?: VerdictTest; test: DifferenceTest | null }[];
    }[];
  };
  const nan = (x: number | null) => x ?? NaN;
  return {
    ...r,
    comparisons: r.comparisons.map((c, i) => ({
      ...c,
      claims: c.claims.map((claim, j) => {
        const published = raw.comparisons[i].claims[j];
        const test = published.test;
        return {
          ...claim,
          verdict: published.verdict,
          test: test && { ...test, t: nan(test.t), df: nan(test.df), p: nan(test.p) },
          decidedBy: published.decidedBy ?? (claim.against === null ? "one-sample" : "welch"),
        };
      }),
    })),
  };
}

/** The study.json of the grid's earlier study (`previous`), absolute; null when it names none. */
export function previousResultsFile(grid: Pick<Grid, "file" | "previous">): string | null {
  return grid.previous === undefined ? null : resolve(dirname(grid.file), grid.previous.results);
}

/**
 * The results with the grid's earlier study (`previous`) read and compared, claim by claim (its
 * verdicts as it published them), with the power of the grid's claims planned from its per-seed
 * values (`deno task study power`); the results unchanged when the grid names none. Results read
 * from that very file (`from`, re-rendering the earlier study) keep the comparison they hold.
 *
 * @example
 * ```ts
 * import { loadGrid, type StudyResults } from "./mod.ts";
 * declare const results: StudyResults;
 * const grid = await loadGrid("study/grid.json");
 * const r = await withPreviousStudy(results, grid); // r.previous?.claims.filter((c) => c.changed)
 * ```
 */
export async function withPreviousStudy(
  r: StudyResults,
  grid: Grid,
  from?: string,
): Promise<StudyResults> {
  const file = previousResultsFile(grid);
  if (file === null) return { ...r, previous: null };
  if (from !== undefined && resolve(from) === file) return r;
  const earlier = await readPublishedResults(file);
  const previous = previousStudy(r, earlier, relative(Deno.cwd(), file), grid);
  return { ...r, previous: { ...previous, plannedPower: planPower(grid, earlier) } };
}

/**
 * The results with every claim's power computed anew from its per-seed values at the results'
 * own seeds and evaluation sizes, with the grid's target power and paper effects (matched by
 * comparison, cell, compared cell and metric).
 *
 * @example
 * ```ts
 * import { loadGrid, renderStudy, studyCharts } from "./mod.ts";
 * const grid = await loadGrid("study/grid.json");
 * const earlier = await readStudyResults("docs/study/study.json");
 * const page = renderStudy(withPower(earlier, grid), studyCharts(earlier), "docs/study");
 * ```
 */
export function withPower(r: StudyResults, grid: Grid): StudyResults {
  const cells = new Map(r.cells.map((c) => [c.id, c]));
  const design = { seeds: r.seeds, alpha: r.alpha, power: grid.power };
  return {
    ...r,
    power: grid.power,
    comparisons: r.comparisons.map((comparison) => {
      const spec = grid.comparisons.find((c) => c.id === comparison.id);
      return {
        ...comparison,
        claims: comparison.claims.map((c) => {
          const claimSpec = spec?.claims.find((x) =>
            x.cell === c.cell && x.metric === c.metric &&
            (c.against === null || (x.against ?? spec.baseline) === c.against)
          );
          const effect = claimSpec?.paper_effect ?? null;
          return { ...c, power: powerOfClaim(c, cells, effect, design) };
        }),
      };
    }),
  };
}
