/**
 * The study grid file (`study/grid.json`): the cells (one experiment config each, run for every
 * seed), the comparisons the report makes between them, and the papers' claims each comparison
 * checks. Keys are snake_case as in experiment configs; cross-references are checked in
 * load-grid.ts.
 */
import { z } from "zod";
import { SPIKE_MULTIPLE } from "../analysis/mod.ts";

const ID_PATTERN = /^[a-z][a-z0-9-]{0,47}$/;
const id = z.string().regex(ID_PATTERN, {
  error: "an id: a lowercase letter, then up to 47 of a-z 0-9 -",
});
const text = z.string().min(1, { error: "a non-empty text" });

/**
 * What a claim measures, per run, before the runs of two cells are compared: accuracy at the last
 * evaluation (avg@k, pass@k with k the samples per problem), per-agent gradient-norm stability
 * (max/median, spike count), the per-agent Lemma 4.2 multiplier (mean over steps) and the final
 * debate round's critic improvement rate.
 */
export const CLAIM_METRICS = [
  "avg@k",
  "pass@k",
  "grad-norm-max-over-median",
  "grad-norm-spikes",
  "lemma-multiplier",
  "critic-improvement",
] as const;

/** Metrics measured once per agent rather than once per run. */
export const AGENT_METRICS: readonly ClaimMetric[] = [
  "grad-norm-max-over-median",
  "grad-norm-spikes",
  "lemma-multiplier",
];

/**
 * The paper's direction for `cell` against `against`: higher, lower, not lower (no significant
 * drop), or, for the Lemma 4.2 multiplier of one cell, different from 1 or above 1.
 */
export const EXPECTATIONS = ["higher", "lower", "not-lower", "not-one", "above-one"] as const;

/** Expectations that test one cell's multiplier against 1 rather than two cells. */
export const ONE_CELL_EXPECTATIONS: readonly Expectation[] = ["not-one", "above-one"];

/** Figures a comparison draws besides the study-wide accuracy chart. */
export const CHART_KINDS = ["grad-norm", "lemma-multiplier", "critic-improvement"] as const;

/**
 * The paper's effect for a claim, for the power analysis: a `difference` in the metric's own units
 * (rates as fractions: 0.045 is 4.5 points; for a one-cell claim, the departure from 1), or a
 * `relative` change of the reference cell's mean (0.056 is +5.6%).
 */
const paperEffect = z.union([
  z.strictObject({ difference: z.number().refine((x) => x !== 0, "a nonzero difference") }),
  z.strictObject({ relative: z.number().refine((x) => x !== 0, "a nonzero relative change") }),
]);

const claim = z.strictObject({
  /** The cell whose runs are tested. */
  cell: id,
  /** The cell it is compared with; default the comparison's baseline (unused by one-cell tests). */
  against: id.optional(),
  /** For a per-agent metric: test this agent only (default every agent of the cells). */
  agent: id.optional(),
  metric: z.enum(CLAIM_METRICS),
  expect: z.enum(EXPECTATIONS),
  /** What the paper reports, quoted in the report beside the study's own number. */
  paper: text,
  /** The paper's effect as a number, when it states one; the power analysis sizes seeds for it. */
  paper_effect: paperEffect.optional(),
  /** Why this claim's verdict differs from the grid's `previous` study, for the report. */
  since_previous: text.optional(),
});

const comparison = z.strictObject({
  id,
  title: text,
  baseline: id,
  /** The cells compared with the baseline. */
  cells: z.array(id).min(1),
  claims: z.array(claim).default([]),
  charts: z.array(z.enum(CHART_KINDS)).default([]),
  /** What the reader should know about how this comparison differs from the paper's. */
  note: text.optional(),
});

const cell = z.strictObject({
  id,
  title: text,
  /** Experiment config file, relative to the grid file. */
  config: text,
  /**
   * The cell whose start run gives this cell's accuracy before training: that cell's config run
   * for 0 steps (seed 0), which evaluates its initial team once. A cell names itself to run its
   * own; cells whose initial teams are the same (same tasks, workflow, agents' prompts and models,
   * sampling and evaluation; they may differ in estimator, loss, rewards, weight sharing) name one
   * cell and share its run. Without it the cell has no start run.
   */
  start: id.optional(),
});

/** The whole grid file. */
export const gridSchema = z.strictObject({
  title: text,
  /** Seeds per cell unless `--seeds` says otherwise; seeds are 0 .. seeds-1. */
  seeds: z.number().int().min(1).max(100).default(5),
  /** Significance level of the agree/disagree verdicts. */
  alpha: z.number().gt(0).lt(1).default(0.05),
  /** The power the power analysis asks of each claim's test (minimum detectable effect, seeds). */
  power: z.number().gt(0).lt(1).default(0.8),
  /** The multiple of the spike rule (analysis `gradientSpikes`), SPIKE_MULTIPLE by default. */
  spike_multiple: z.number().gt(1).default(SPIKE_MULTIPLE),
  /** Model directories that agents use besides "embedded", and the command that produces each. */
  models: z.record(z.string().min(1), text).default({}),
  cells: z.array(cell).min(1),
  comparisons: z.array(comparison).default([]),
  /**
   * An earlier study of the same claims: the report tables every earlier claim's verdict beside
   * this one's, with the setup changes of its cells and the `changes` stated here.
   */
  previous: z.strictObject({
    /** Its study.json, relative to the grid file. */
    results: text,
    /** How the report names it, e.g. "v1". */
    title: text,
    /** What changed for every cell that no setup line shows (code, models). */
    changes: z.array(text).default([]),
  }).optional(),
});

/** What a grid file may contain. */
export type GridInput = z.input<typeof gridSchema>;
/** A parsed grid with defaults filled in. */
export type GridFile = z.output<typeof gridSchema>;
/** One cell as written in the grid file. */
export type GridCellSpec = GridFile["cells"][number];
/** One comparison. */
export type Comparison = GridFile["comparisons"][number];
/** One claim of a comparison. */
export type Claim = Comparison["claims"][number];
/** A paper's stated effect. */
export type PaperEffect = z.output<typeof paperEffect>;
/** A claim's metric. */
export type ClaimMetric = (typeof CLAIM_METRICS)[number];
/** A claim's expected direction. */
export type Expectation = (typeof EXPECTATIONS)[number];
/** A chart kind. */
export type ChartKind = (typeof CHART_KINDS)[number];
