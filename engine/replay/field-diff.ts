/**
 * Field-level differences between a logged event's data and its regenerated twin: the paths
 * that differ, typed arrays summarised by where and how much they differ.
 */

/** One differing field. */
export interface FieldDifference {
  readonly kind: "field-difference";
  /** e.g. `losses.total`, `logprobs`, `prompts[0].problemId` */
  readonly path: string;
  readonly recorded: string;
  readonly replayed: string;
}

type TypedArray = Float32Array | Float64Array | Int32Array | Uint8Array | Int8Array | Uint32Array;

const isTyped = (v: unknown): v is TypedArray => ArrayBuffer.isView(v) && !(v instanceof DataView);
const sameNumber = (a: number, b: number) => a === b || (Number.isNaN(a) && Number.isNaN(b));

function show(v: unknown): string {
  if (isTyped(v)) return `${v.constructor.name}(${v.length})`;
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function diffTyped(path: string, a: TypedArray, b: TypedArray, out: FieldDifference[]): void {
  const n = Math.min(a.length, b.length);
  let first = -1;
  let count = 0;
  let maxAbs = 0;
  for (let i = 0; i < n; i++) {
    if (sameNumber(a[i], b[i])) continue;
    if (first < 0) first = i;
    count++;
    maxAbs = Math.max(maxAbs, Math.abs(a[i] - b[i]));
  }
  if (first < 0 && a.length === b.length) return;
  const at = first < 0 ? n : first;
  out.push({
    kind: "field-difference",
    path,
    recorded: `${a.length} values, [${at}] = ${a[at] ?? "(end)"}`,
    replayed: `${b.length} values, [${at}] = ${b[at] ?? "(end)"}` +
      (count > 0 ? `; ${count} of ${n} differ, max |diff| ${maxAbs}` : ""),
  });
}

/**
 * The paths at which `recorded` and `replayed` differ, depth first, at most `limit` of them.
 *
 * @example
 * ```ts
 * import { fieldDiff } from "./field-diff.ts";
 *
 * fieldDiff({ losses: { total: 1 } }, { losses: { total: 1.5 } });
 * // [{ kind: "field-difference", path: "losses.total", recorded: "1", replayed: "1.5" }]
 * ```
 */
export function fieldDiff(
  recorded: unknown,
  replayed: unknown,
  limit = 20,
  path = "",
  out: FieldDifference[] = [],
): FieldDifference[] {
  if (out.length >= limit) return out;
  const differ = () =>
    out.push({
      kind: "field-difference",
      path: path || "(data)",
      recorded: show(recorded),
      replayed: show(replayed),
    });
  if (isTyped(recorded) && isTyped(replayed)) {
    diffTyped(path, recorded, replayed, out);
  } else if (Array.isArray(recorded) && Array.isArray(replayed)) {
    if (recorded.length !== replayed.length) differ();
    else recorded.forEach((v, i) => fieldDiff(v, replayed[i], limit, `${path}[${i}]`, out));
  } else if (
    recorded !== null && replayed !== null && typeof recorded === "object" &&
    typeof replayed === "object" && !isTyped(recorded) && !isTyped(replayed) &&
    !Array.isArray(recorded) && !Array.isArray(replayed)
  ) {
    const a = recorded as Record<string, unknown>;
    const b = replayed as Record<string, unknown>;
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      fieldDiff(a[key], b[key], limit, path ? `${path}.${key}` : key, out);
    }
  } else if (typeof recorded === "number" && typeof replayed === "number") {
    if (!sameNumber(recorded, replayed)) differ();
  } else if (recorded !== replayed) differ();
  return out.slice(0, limit);
}
