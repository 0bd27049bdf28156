/**
 * String-level clean-up of an extracted answer before tokenizing: spacing commands, `\left`/
 * `\right`, fraction variants, units of angle and currency, thousands separators. Each rule
 * here exists because model outputs write the same value in several spellings. A percent stays,
 * spelled `\%`, for the parser to read as a hundredth.
 *
 * @example
 * ```ts
 * normalizeLatex("\\$16,\\!386.20"); // "16386.20"
 * normalizeLatex("\\dfrac13");       // "\\frac{1}{3}"
 * ```
 */

/**
 * Undoes doubled escaping (`\\frac` written where `\frac` was meant, as in JSON that was escaped
 * twice). A real LaTeX line break `\\` is followed by a space, `&`, digit or `\end`, never by a
 * letter directly, so only `\\` + letter not preceded by another backslash is collapsed.
 */
export function collapseDoubledBackslashes(text: string): string {
  return text.replace(/(?<!\\)\\\\(?=[a-zA-Z])/g, "\\");
}

const TEXT_COMMANDS =
  /\\(?:text|textbf|textit|textrm|textup|mbox|mathrm|operatorname|textnormal)\b/g;

/** Normalizes one extracted answer string. */
export function normalizeLatex(input: string): string {
  let s = collapseDoubledBackslashes(input);
  s = s.replace(TEXT_COMMANDS, "\\text");
  // `\quadx` (no space after a spacing command) still means a space then x.
  s = s.replace(/\\q?quad(?=[a-zA-Z])/g, " ");
  s = s.replace(
    /\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg|displaystyle|textstyle|limits|nolimits)(?![a-zA-Z])/g,
    "",
  );
  // `32,\! 349`: a negative thin space inside a thousands group joins, never separates.
  s = s.replace(/(\d),\s*\\!\s*(?=\d{3}(?!\d))/g, "$1,").replace(/\\!/g, "");
  s = s.replace(/(?<!\\)\\(?:q?quad|[,;: ])/g, " ").replace(/~/g, " ");
  s = s.replace(/\\[dtc]frac(?![a-zA-Z])/g, "\\frac");
  // `\frac13`, `\frac3{3}`, `\frac{1}3`: single-token fraction arguments.
  s = s.replace(/\\frac\s*(\d)\s*(\d)/g, "\\frac{$1}{$2}");
  s = s.replace(/\\frac\s*([a-zA-Z\d])\s*\{/g, "\\frac{$1}{");
  s = s.replace(/\\frac\s*(\{[^{}]*\})\s*([a-zA-Z\d])/g, "\\frac$1{$2}");
  s = s.replace(/\\sqrt\s*(\d)/g, "\\sqrt{$1}");
  // Degrees and currency do not change the compared value.
  s = s.replace(/\^\s*\{\s*\\circ\s*\}|\^\s*\\circ|\\circ|\\degree/g, "");
  s = s.replace(/\\\$|\$/g, "");
  // A percent is a hundredth (latex2sympy2's PERCENT_NUMBER): the words become `\%` as in
  // Math-Verify's normalization (`percent`, `percentage`, `pct`, `\text{percent}`).
  s = s.replace(/\\text\{(?:percentage|percent|pct)\}/g, "\\%");
  s = s.replace(/\s*\b(?:percentage|percent|pct)\b/g, "\\%");
  // `0,111` alone is the decimal 0.111, not 111 (latex2sympy2's `convert_number`).
  s = s.replace(/^\s*0,(\d{3})\s*$/, "0.$1");
  // Thousands: `14{,}916`, `14 {, }916`, `12,000,023` (not a pair like `(1,100)`).
  s = s.replace(/(\d)\s*\{\s*,\s*\}\s*(?=\d)/g, "$1");
  s = s.replace(
    /(?<![\d.,])(\d{1,3}(?:,\d{3})+)(?![\d,])/g,
    (m, _g, offset: number, all: string) => {
      const before = all.slice(0, offset).trimEnd().slice(-1);
      const after = all.slice(offset + m.length).trimStart().slice(0, 1);
      const bracketed = "([{".includes(before) && before !== "" && ")]}".includes(after) &&
        after !== "";
      return bracketed ? m : m.replace(/,/g, "");
    },
  );
  // An approximation after an exact chain adds nothing: `x = 1/3 \approx 0.33`.
  const approx = s.search(/\\approx/);
  if (approx >= 0) {
    s = s.slice(0, approx).includes("=") ? s.slice(0, approx) : s.replace(/\\approx/g, "=");
  }
  // Connector words between answers act as list separators: `1 and 2`, `W(x)=1orW(x)=-1`.
  s = s.replace(/\\text\s*\{\s*(?:and|or)\s*\}/g, ",");
  s = s.replace(/(?<=[\d)\]}\s])(?:and|or)(?![a-z])/g, ",");
  return s.trim().replace(/[.\s]+$/, "");
}

/**
 * A cheap spelling-insensitive key: two answers with the same key are equal without parsing
 * (covers free text like `\text{The midpoints form a regular hexagon}`).
 */
export function stringKey(input: string): string {
  return collapseDoubledBackslashes(input)
    .replace(TEXT_COMMANDS, "\\text")
    .replace(/\\text\s*\{([^{}]*)\}/g, "$1")
    .replace(/\\[dtc]frac/g, "\\frac")
    .replace(/\\(?:left|right)(?![a-zA-Z])/g, "")
    .replace(/\\(?:q?quad|[,;:! ])/g, "")
    .replace(/[\s$]/g, "")
    .replace(/\.+$/, "");
}
