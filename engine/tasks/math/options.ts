/**
 * Grading options, in the shape used by `tests/conformance/math-equivalence.jsonl`
 * (`float_rounding`, `strict`, `allow_set_relation_comp`, `plain_only`, `latex_only`).
 *
 * @example
 * ```ts
 * gradeOptions({ float_rounding: 2 }); // { floatRounding: 2, strict: true, ... }
 * ```
 */

/** How strictly two answers are compared. */
export interface GradeOptions {
  /** Decimal places both numbers are rounded to before comparing (default 6). */
  readonly floatRounding: number;
  /** When false, free variables may be renamed (`f(x)` matches `f(y)`). Default true. */
  readonly strict: boolean;
  /** Lets a predicted relation (`-2 \le x \le 7`) match a gold set (`[-2, 7]`). Default false. */
  readonly allowSetRelation: boolean;
  /**
   * Extract plain numbers only (no LaTeX), with `1 000`, `1,000.5`, `2,74` and `.5` spellings:
   * Math-Verify's `parse(..., extraction_config=[ExprExtractionConfig()])`. Default false.
   */
  readonly plainOnly: boolean;
  /**
   * Extract from LaTeX only (`\boxed{}`, `$..$`, `\(..\)`, `\[..\]`), never a plain-text number,
   * so `.5` or `0,5` written outside math is no answer: Math-Verify's
   * `parse(..., extraction_config=[LatexExtractionConfig()])`, as open-r1's accuracy reward
   * parses predictions. Default false: both extractors, Math-Verify's `parse` default.
   */
  readonly latexOnly: boolean;
}

/** The defaults (Math-Verify's defaults). */
export const DEFAULT_GRADE_OPTIONS: GradeOptions = Object.freeze({
  floatRounding: 6,
  strict: true,
  allowSetRelation: false,
  plainOnly: false,
  latexOnly: false,
});

/** Raised for an options object with an unknown key or a value of the wrong type. */
export class GradeOptionsError extends Error {
  override name = "GradeOptionsError";
  constructor(readonly key: string, readonly value: unknown, readonly allowed: string) {
    super(`option ${key}=${JSON.stringify(value)} is invalid: expected ${allowed}`);
  }
}

const KEYS: Record<string, keyof GradeOptions> = {
  float_rounding: "floatRounding",
  strict: "strict",
  allow_set_relation_comp: "allowSetRelation",
  plain_only: "plainOnly",
  latex_only: "latexOnly",
};

/** Validates a raw options object (conformance-file keys) and fills in defaults. */
export function gradeOptions(raw: unknown): GradeOptions {
  if (raw === undefined || raw === null) return DEFAULT_GRADE_OPTIONS;
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new GradeOptionsError("options", raw, "an object");
  }
  const out: Record<string, number | boolean> = { ...DEFAULT_GRADE_OPTIONS };
  for (const [key, value] of Object.entries(raw)) {
    const field = KEYS[key];
    if (!field) {
      throw new GradeOptionsError(key, value, `one of the keys ${Object.keys(KEYS).join(", ")}`);
    }
    if (field === "floatRounding") {
      if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 15) {
        throw new GradeOptionsError(key, value, "an integer from 0 to 15");
      }
    } else if (typeof value !== "boolean") {
      throw new GradeOptionsError(key, value, "true or false");
    }
    out[field] = value as number | boolean;
  }
  if (out.plainOnly && out.latexOnly) {
    throw new GradeOptionsError("latex_only", true, "false when plain_only is true");
  }
  return Object.freeze(out) as unknown as GradeOptions;
}
