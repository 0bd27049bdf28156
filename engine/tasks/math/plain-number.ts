/**
 * Numbers written in plain text (outside LaTeX), read the way Math-Verify's expression extractor
 * reads them (`src/math_verify/parser.py`, `lazy_expr_regex` and `extract_expr`):
 *
 * - thousands groups split by `,` or a space: `1,234.5`, `1 000` (first digit not 0);
 * - a decimal comma: `2,74`, `0,5`, `1000,99`;
 * - a leading-dot decimal: `.5`;
 * - a simple fraction `2/3` (Math-Verify reads it as an expression);
 * - a percent sign or word after the number (`%`, `percent`, `percentage`, `pct`), which makes
 *   the value a hundredth (`convert_to_pct`) while the answer text stays the bare number.
 *
 * A number starts the text or follows whitespace or `=`, optionally after `**` and a currency
 * sign (`$1,000.99`, `is 1,000.99€`), so `AZYUK2A` holds none.
 *
 * @example
 * ```ts
 * lastPlainNumber("Soucis : 2,74 $ a..");   // { answer: "2.74", percent: false, ... }
 * lastPlainNumber("so 50 percent");          // { answer: "50", percent: true, ... }
 * ```
 */

/** One plain number found in a text. */
export interface PlainNumber {
  /** Where the match (a currency sign and a percent word included) starts and ends. */
  readonly start: number;
  readonly end: number;
  /** The number in canonical spelling: no thousands separators, a decimal point. */
  readonly answer: string;
  /** A percent sign or word followed it. */
  readonly percent: boolean;
}

const CURRENCY = "$€£¥₹₽₪₩₫฿₡₢₣₤₥₦₧₨₭₮₯₰₱₲₳₴₵₶₷₸₺₻₼₾₿";
/** The spellings in Math-Verify's order: the first that fits at a position wins. */
const NUMBER_BODY = [
  String.raw`(?<thousands>-?[1-9]\d{0,2}(?:[ ,]\d{3})+(?:\.\d+)?)`, // 1,234.5 and 1 000
  String.raw`(?<decimal>-?\d+[.,]\d+)`, // 2.74 and 2,74
  String.raw`(?<leadingDot>-?\.\d+)`, // .5
  String.raw`(?<integer>-?\d+(?:\/\d+)?)`, // 12 and 2/3
].join("|");
const PERCENT = String.raw`(?<percent>\s*(?:%|[Pp]ercent|[Pp]ct))?`;
/** Anchor, optional bold and currency, the number, an optional percent. */
const PLAIN_NUMBER = new RegExp(
  String.raw`(?:^|(?<=[\s=]))(?:\*\*)?[${CURRENCY}]?(?<!\d)(?:${NUMBER_BODY})${PERCENT}`,
  "g",
);

/** The canonical spelling of a matched number: no thousands separators, a decimal point. */
function canonical(groups: Record<string, string | undefined>): string {
  if (groups.thousands) return groups.thousands.replace(/[ ,]/g, "");
  if (groups.decimal) return groups.decimal.replace(",", ".");
  // `.5` reads as 0.5 (Math-Verify's `extract_expr` puts the 0 back).
  if (groups.leadingDot) return groups.leadingDot.replace(".", "0.");
  return groups.integer!;
}

function numbersIn(text: string): PlainNumber[] {
  return [...text.matchAll(PLAIN_NUMBER)].map((m) => ({
    start: m.index!,
    end: m.index! + m[0].length,
    answer: canonical(m.groups!),
    percent: m.groups!.percent !== undefined,
  }));
}

/**
 * The last plain number in `text` (Math-Verify takes the match that ends last), or null.
 *
 * @example
 * ```ts
 * lastPlainNumber("the number is not 10 which is 1,000.99€")?.answer; // "1000.99"
 * ```
 */
export function lastPlainNumber(text: string): PlainNumber | null {
  const all = numbersIn(text);
  return all.length > 0 ? all[all.length - 1] : null;
}

/**
 * The number when the whole text is one plain number (surrounding blanks and a final period
 * allowed), else null: `0,5` is the number 0.5 here, not the list `0, 5`.
 *
 * @example
 * ```ts
 * wholePlainNumber("28 percent"); // { answer: "28", percent: true, ... }
 * wholePlainNumber("x + 1");      // null
 * ```
 */
export function wholePlainNumber(text: string): PlainNumber | null {
  const trimmed = text.trim().replace(/\.$/, "");
  const all = numbersIn(trimmed);
  return all.length === 1 && all[0].start === 0 && all[0].end === trimmed.length ? all[0] : null;
}
