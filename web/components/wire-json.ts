/**
 * JSON for data that holds non-finite numbers or bigints (skipped gradient steps have NaN norms): NaN and
 * the infinities travel as the strings "NaN", "Infinity", "-Infinity", as in analysis'
 * components_json, and come back as numbers.
 *
 * @example
 * ```ts
 * fromWire(toWire({ norm: NaN })); // { norm: NaN }
 * ```
 */
export function toWire(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (typeof v === "number" && !Number.isFinite(v)) return String(v);
    // DuckDB BIGINTs: exact as numbers up to 2^53, as text beyond.
    if (typeof v === "bigint") return Number.isSafeInteger(Number(v)) ? Number(v) : String(v);
    return v;
  });
}

const NON_FINITE: Record<string, number> = {
  NaN: NaN,
  Infinity: Infinity,
  "-Infinity": -Infinity,
};

/** Parses `toWire` output. */
export function fromWire<T>(text: string): T {
  // The reviver costs a call per value: skip it when no non-finite number was sent.
  if (!/"(NaN|-?Infinity)"/.test(text)) return JSON.parse(text);
  return JSON.parse(
    text,
    (_k, v) => (typeof v === "string" && v in NON_FINITE ? NON_FINITE[v] : v),
  );
}
