/**
 * How this study's verdicts moved since an earlier study of the same claims (the grid's
 * `previous`): each earlier claim matched to this one's by cell, compared cell, agent, metric and
 * expectation, and why a verdict moved, in named causes:
 *
 * - `paired-test`: the verdict is now the paired test's, and Welch's test on the same runs gives
 *   another (the test, not the data, moved it);
 * - `benchmark`: what the cells were evaluated on changed (the benchmark's problems, by SHA-256:
 *   one fixed benchmark for every seed instead of each seed's own; the split sizes; what is
 *   evaluated);
 * - `difficulty`: the tasks changed (difficulty, hops, documents);
 * - `preset`: a setting the cell's config file leaves to its preset changed (the preset's values
 *   moved, as under the fidelity rounds);
 * - `cell-config`: a setting the cell's own file sets changed.
 *
 * Setup changes are found once per cell (config key by config key where both studies recorded
 * the cells' configs, else setup line by setup line) and stated once with every cell they apply
 * to; a claim refers to its cells' changes. The grid states the changes no setup shows (code,
 * models) and, per claim, why its verdict moved (`since_previous`).
 */
import { decidingTest, type Verdict, verdictOf, type VerdictTest } from "./claims.ts";
import { benchmarkText, type CellBenchmark } from "./cell-benchmarks.ts";
import type { CellSetup } from "./cell-setup.ts";
import { configLeaves } from "./config-leaves.ts";
import { ONE_CELL_EXPECTATIONS } from "./grid-schema.ts";
import type { Grid } from "./load-grid.ts";
import type { PowerRow } from "./plan-power.ts";
import type { CellResult, ClaimIdentity, ClaimResult, StudyResults } from "./study-results.ts";

/** Why a verdict moved, in the order the report names them. */
export const CHANGE_CAUSES = [
  "paired-test",
  "benchmark",
  "difficulty",
  "preset",
  "cell-config",
] as const;

/** One cause of a moved verdict. */
export type ChangeCause = (typeof CHANGE_CAUSES)[number];

/** The causes a setup change can have (the paired test is not one). */
export type SetupCause = Exclude<ChangeCause, "paired-test">;

/** One claim's verdict in one study. */
export interface ClaimOutcome {
  readonly verdict: Verdict;
  /** Cell minus reference (or minus 1), null when untested. */
  readonly diff: number | null;
  /** p of the test the verdict was taken from. */
  readonly p: number | null;
  /** Samples per problem of the tested cell (the k of avg@k, pass@k). */
  readonly k: number;
  /** The test the verdict was taken from; absent in files written before paired tests (Welch). */
  readonly decidedBy?: VerdictTest;
  /** Welch's verdict on the same runs (the verdict itself where Welch or one-sample decided). */
  readonly welchVerdict?: Verdict;
}

/** One setup change between the studies, with every cell it applies to. */
export interface SetupChange {
  /** "S1", "S2", ...: how the changes table refers to it. */
  readonly id: string;
  readonly cause: SetupCause;
  /**
   * What changed: a setup line ("estimator"), a config key ("loss.entropy_coeff", agents'
   * keys as "agents.*.optimizer.lr"), or "benchmark" (the problems' SHA-256).
   */
  readonly key: string;
  readonly before: string;
  readonly after: string;
  /** The cells it applies to, in the grid's order. */
  readonly cells: readonly string[];
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
  /**
   * Why a changed verdict moved: the paired test where it decided otherwise than Welch's, then
   * the causes of the claim's cells' setup changes where the data moved it; empty for a verdict
   * that did not move, or one whose cells show no change.
   */
  readonly causes: readonly ChangeCause[];
  /** The ids of the setup changes (PreviousStudy `setupChanges`) of the claim's cells. */
  readonly setupChanges: readonly string[];
  /** The claim's cells this study does not run: its earlier verdict is not rerun. */
  readonly notRerun: readonly string[];
  /**
   * The setup lines of the claim's cells that differ, in files written before setup changes were
   * stated once per cell (v2's comparison with v1); absent since.
   */
  readonly setup?: readonly string[];
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
  /** Seeds per cell in both studies, when they differ; null when equal (or in older files). */
  readonly seeds?: { readonly before: number; readonly after: number } | null;
  /** Every setup change of the cells both studies ran, once each (empty in older files). */
  readonly setupChanges?: readonly SetupChange[];
  readonly claims: readonly ClaimChange[];
  /**
   * The power of this grid's claims planned from the earlier study's per-seed values at this
   * grid's seeds and evaluation sizes, as `deno task study power` gives it before any run
   * (absent in older files).
   */
  readonly plannedPower?: readonly PowerRow[];
}

function keyOf(c: ClaimIdentity): string {
  return JSON.stringify([c.cell, c.against, c.agent, c.metric, c.expect]);
}

/**
 * A claim's outcome in its study: the verdict, and the difference and p of the test it was taken
 * from, with Welch's verdict on the same runs beside it.
 */
function outcome(
  c: ClaimResult,
  cells: ReadonlyMap<string, CellResult>,
  alpha: number,
): ClaimOutcome {
  const test = decidingTest(c);
  const welchVerdict = c.verdict === "pending" || c.decidedBy !== "paired"
    ? c.verdict
    : verdictOf(c.expect, c.test, alpha);
  return {
    verdict: c.verdict,
    diff: test?.diff ?? null,
    p: test === null || Number.isNaN(test.p) ? null : test.p,
    k: cells.get(c.cell)?.k ?? 0,
    decidedBy: c.decidedBy,
    welchVerdict,
  };
}

/** One cell's change before it is grouped with the same change of other cells. */
interface CellChange {
  readonly cause: SetupCause;
  readonly key: string;
  readonly before: string;
  readonly after: string;
}

/**
 * The config keys each setup line of cell-setup.ts shows (agents' keys without their index); a
 * line is the cell's own when its file sets every key it shows, else the preset's.
 */
const SETUP_KEYS: Readonly<Record<keyof CellSetup, readonly string[]>> = {
  workflow: ["workflow"],
  estimator: ["estimator.kind", "estimator.sigma"],
  weights: ["agent_to_wg"],
  models: ["agents.model"],
  trainable: ["agents.trainable"],
  lr: ["agents.optimizer.lr"],
  steps: ["steps"],
  batch: ["batch_size", "group_size"],
  sampling: ["sampling.max_tokens", "sampling.temperature"],
  tasks: ["tasks"],
  evaluation: ["evaluation.benchmarks", "evaluation.n_samples"],
  updates: [
    "updates.mini_batches",
    "updates.epochs",
    "loss.clip_eps_low",
    "loss.clip_eps_high",
    "loss.kl_coef",
    "loss.aggregation",
    "loss.entropy_coeff",
  ],
  rewards: ["rewards"],
};

/** A config key without array indices or an agent list's `replace`: "agents.optimizer.lr". */
function generalKey(key: string): string {
  return key.split(".").filter((s) => !/^\d+$/.test(s) && s !== "replace").join(".");
}

/** Whether `key` (general) is one of `own`'s keys, or above or below one. */
function setBy(own: readonly string[], key: string): boolean {
  return own.some((o) => o === key || o.startsWith(`${key}.`) || key.startsWith(`${o}.`));
}

/** A generated task set without its split sizes: what decides the problems' difficulty. */
function taskKind(tasks: string): string {
  return tasks.replace(/;\s*\d+ train, \d+ validation, \d+ test problems$/, "");
}

/**
 * The cause of a change of `key` (a setup line or a general config key) in a cell whose file sets
 * `own` (general keys).
 */
function causeOf(
  key: string,
  before: string,
  after: string,
  own: readonly string[],
  line: boolean,
): SetupCause {
  const head = key.split(".")[0];
  if (head === "benchmark" || head === "evaluation") return "benchmark";
  if (head === "tasks") {
    if (line) return taskKind(before) === taskKind(after) ? "benchmark" : "difficulty";
    return /^tasks\.(splits|seed)(\.|$)/.test(key) ? "benchmark" : "difficulty";
  }
  const keys = line ? SETUP_KEYS[key as keyof CellSetup] ?? [key] : [key];
  return keys.every((k) => setBy(own, k)) ? "cell-config" : "preset";
}

/** A config leaf as the changes table prints it: a string bare, long text cut short. */
function leafText(json: string | undefined): string {
  if (json === undefined) return "absent";
  const text = json.startsWith('"') ? JSON.parse(json) as string : json;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** What the cell was evaluated on, for comparing two studies: names, sets and their sizes. */
function benchmarkSummary(benchmarks: readonly CellBenchmark[] | undefined): string {
  if (!benchmarks || benchmarks.length === 0) return "not recorded";
  const text = benchmarkText(benchmarks);
  return benchmarks.every((b) => b.sets.length === 1) ? `${text}, the same for every seed` : text;
}

/** The changes of one cell between its earlier and its current result. */
function cellChanges(was: CellResult, now: CellResult): CellChange[] {
  const own = [
    ...(now.follows?.ownKeys ?? []),
    ...(was.follows?.ownKeys ?? []),
  ].map(generalKey);
  const changes = new Map<string, CellChange>();
  const add = (key: string, before: string, after: string, line: boolean) => {
    const change = { cause: causeOf(key, before, after, own, line), key, before, after };
    changes.set(JSON.stringify([key, before, after]), change);
  };
  if (was.config && now.config) {
    const [x, y] = [configLeaves(was.config), configLeaves(now.config)];
    for (const key of new Set([...x.keys(), ...y.keys()])) {
      // The name labels the run; worker groups are derived from agents and agent_to_wg.
      if (/^(name|worker_groups)(\.|$)/.test(key) || x.get(key) === y.get(key)) continue;
      // Agents' keys once for all agents changed alike: "agents.*.optimizer.lr".
      const shown = key.replace(/\.\d+(?=\.|$)/g, ".*");
      add(shown, leafText(x.get(key)), leafText(y.get(key)), false);
    }
  } else {
    for (const field of Object.keys(now.setup) as (keyof CellSetup)[]) {
      const [before, after] = [was.setup[field], now.setup[field]];
      // A line the earlier study did not record (v1's updates) is not a change it shows.
      if (before === undefined || after === undefined) continue;
      if (String(before) !== String(after)) add(field, String(before), String(after), true);
    }
  }
  if (now.benchmarks.length > 0) {
    const [before, after] = [benchmarkSummary(was.benchmarks), benchmarkSummary(now.benchmarks)];
    if (before !== after) add("benchmark", before, after, false);
  }
  return [...changes.values()];
}

/**
 * Every setup change of the cells both studies ran, once per distinct change with the cells it
 * applies to, ordered by cause, then by the first cell's order; ids S1, S2, ... in that order.
 */
function setupChanges(before: StudyResults, after: StudyResults): SetupChange[] {
  const grouped = new Map<string, CellChange & { cells: string[]; order: number }>();
  after.cells.forEach((now, order) => {
    const was = before.cells.find((c) => c.id === now.id);
    if (!was) return;
    for (const change of cellChanges(was, now)) {
      const key = JSON.stringify([change.cause, change.key, change.before, change.after]);
      const group = grouped.get(key) ?? { ...change, cells: [], order };
      group.cells.push(now.id);
      grouped.set(key, group);
    }
  });
  return [...grouped.values()]
    .sort((a, b) =>
      CHANGE_CAUSES.indexOf(a.cause) - CHANGE_CAUSES.indexOf(b.cause) || a.order - b.order
    )
    .map((g, i) => ({
      id: `S${i + 1}`,
      cause: g.cause,
      key: g.key,
      before: g.before,
      after: g.after,
      cells: g.cells,
    }));
}

/**
 * Why a verdict moved from `before` to `after`: the paired test where the verdict is now another
 * test's and that test decided otherwise than the earlier one would have on the same runs; the
 * causes of `changes` (the claim's cells' setup changes) where the earlier test's verdict moved
 * too (the data moved it).
 */
function causesOf(
  before: ClaimOutcome,
  after: ClaimOutcome,
  changes: readonly SetupChange[],
): ChangeCause[] {
  const [was, now] = [before.decidedBy ?? "welch", after.decidedBy ?? "welch"];
  // This study's verdict under the earlier study's test; null when it cannot be told.
  const sameTest = was === now
    ? after.verdict
    : was === "welch"
    ? after.welchVerdict ?? null
    : null;
  const causes = new Set<ChangeCause>();
  if (sameTest !== null && sameTest !== after.verdict) causes.add("paired-test");
  if (sameTest === null || sameTest !== before.verdict) {
    for (const c of changes) causes.add(c.cause);
  }
  return CHANGE_CAUSES.filter((c) => causes.has(c));
}

/**
 * Matches the earlier study's claims with this one's: every earlier claim (changed or not, not
 * rerun, or dropped), then the claims new in this study, with the setup changes of the cells
 * both ran and the causes of every moved verdict.
 *
 * @example
 * ```ts
 * import { loadGrid, readStudyResults, type StudyResults } from "./mod.ts";
 * declare const results: StudyResults;
 * const grid = await loadGrid("study/grid.json");
 * const moved = previousStudy(results, await readStudyResults("docs/study/v2/study.json"),
 *   "docs/study/v2/study.json", grid).claims.filter((c) => c.changed);
 * moved.map((c) => c.causes); // [["paired-test"], ["benchmark", "difficulty"], ...]
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
  const changes = setupChanges(previous, current);
  const now = new Map(claimsOf(current).map((c) => [keyOf(c), c]));
  const seen = new Set<string>();
  const row = (was: ClaimResult | null, is: ClaimResult | null): ClaimChange => {
    const c = (is ?? was)!;
    const before = was && outcome(was, beforeCells, previous.alpha);
    const after = is && outcome(is, afterCells, current.alpha);
    // A verdict that became (or stopped being) "not testable" moved too: v1's verifier spikes
    // agreed, and after the estimator fix neither cell spikes at all.
    const decided = (o: ClaimOutcome | null) => o !== null && o.verdict !== "pending";
    const changed = decided(before) && decided(after) && before!.verdict !== after!.verdict;
    const cells = [c.cell, ...(c.against ? [c.against] : [])];
    const mine = changes.filter((s) => s.cells.some((x) => cells.includes(x)));
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
      changed,
      causes: changed ? causesOf(before!, after!, mine) : [],
      setupChanges: was && is ? mine.map((s) => s.id) : [],
      notRerun: is ? [] : cells.filter((x) => !afterCells.has(x)),
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
    seeds: previous.seeds === current.seeds
      ? null
      : { before: previous.seeds, after: current.seeds },
    setupChanges: changes,
    claims: [...earlier, ...added],
  };
}
