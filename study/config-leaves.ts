/**
 * A config as its leaves: every dotted key path (array items by index) with its value as JSON
 * text. What the study compares configs by: which keys a cell's file sets over its preset, which
 * keys keep two cells' initial teams apart, and which changed between two studies.
 */

/**
 * The leaves of a JSON value by dotted path, each value as JSON text; an empty object or array is
 * a leaf, and a value that is not an object is the one leaf "".
 *
 * @example
 * ```ts
 * configLeaves({ tasks: { difficulty: 2 }, agents: [{ model: "m" }] });
 * // Map { "tasks.difficulty" => "2", "agents.0.model" => "\"m\"" }
 * ```
 */
export function configLeaves(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, path: string) => {
    if (v !== null && typeof v === "object" && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v)) walk(x, path === "" ? k : `${path}.${k}`);
    } else out.set(path, JSON.stringify(v) ?? "null");
  };
  walk(value, "");
  return out;
}

/**
 * The dotted paths of a JSON object's leaves.
 *
 * @example
 * ```ts
 * leafPaths({ tasks: { difficulty: 2 }, agents: [{ model: "m" }] }); // ["tasks.difficulty", "agents.0.model"]
 * ```
 */
export function leafPaths(value: unknown): string[] {
  return [...configLeaves(value).keys()].filter((k) => k !== "");
}

/**
 * The keys whose leaves differ between two JSON values, in first-seen order.
 *
 * @example
 * ```ts
 * differingLeaves({ a: 1, b: { c: 2 } }, { a: 1, b: { c: 3 }, d: 4 }); // ["b.c", "d"]
 * ```
 */
export function differingLeaves(a: unknown, b: unknown): string[] {
  const [x, y] = [configLeaves(a), configLeaves(b)];
  return [...new Set([...x.keys(), ...y.keys()])].filter((k) => x.get(k) !== y.get(k));
}
