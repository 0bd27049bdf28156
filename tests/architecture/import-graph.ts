/**
 * The import graph of the project's source folders, read from the files themselves, and the
 * rules it must follow (docs/ARCHITECTURE.md, "Layers"):
 *
 * - a folder imports only from the layers beneath it (`LAYERS`);
 * - an import into another top-level folder goes through a `mod.ts` (that folder's own, or one of
 *   its sub-folders'): everything else is that folder's private business;
 * - a file named `_name.ts` is private to its own folder (Deno std's convention).
 *
 * @example
 * ```ts
 * const violations = findViolations(await readImportGraph("."));
 * for (const v of violations) console.log(`${v.from} -> ${v.to}: ${v.rule}`);
 * ```
 */
import { dirname, join, normalize } from "node:path";

/** The source folders and, for each, the folders it may import from. */
export const LAYERS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  events: [],
  adapters: ["events"],
  engine: ["events", "adapters"],
  analysis: ["events"],
  web: ["events", "analysis"],
  study: ["events", "adapters", "engine", "analysis"],
});

/** One relative import: the importing file and the file it names, both repository-relative. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

/** A broken rule, named for the report. */
export interface Violation extends ImportEdge {
  readonly rule: "upward" | "private-file" | "not-through-mod";
}

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;

async function* sourceFiles(root: string, folder: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(join(root, folder))) {
    const path = join(folder, entry.name);
    if (entry.isDirectory) yield* sourceFiles(root, path);
    else if (/\.(ts|tsx)$/.test(entry.name)) yield path;
  }
}

/** Every relative import of every `.ts`/`.tsx` file under the `LAYERS` folders of `root`. */
export async function readImportGraph(root: string): Promise<ImportEdge[]> {
  const edges: ImportEdge[] = [];
  for (const folder of Object.keys(LAYERS)) {
    const exists = await Deno.stat(join(root, folder)).then(() => true, () => false);
    if (!exists) continue;
    for await (const from of sourceFiles(root, folder)) {
      const text = await Deno.readTextFile(join(root, from));
      for (const match of text.matchAll(SPECIFIER)) {
        const specifier = match[1] ?? match[2];
        if (!specifier.startsWith(".")) continue;
        edges.push({ from, to: normalize(join(dirname(from), specifier)) });
      }
    }
  }
  return edges;
}

const topFolder = (path: string) => path.split("/")[0];

/** The imports of `edges` that break a rule. */
export function findViolations(edges: readonly ImportEdge[]): Violation[] {
  const violations: Violation[] = [];
  for (const edge of edges) {
    const source = topFolder(edge.from);
    const target = topFolder(edge.to);
    const file = edge.to.split("/").at(-1) ?? "";
    if (file.startsWith("_") && dirname(edge.to) !== dirname(edge.from)) {
      violations.push({ ...edge, rule: "private-file" });
    } else if (source !== target && !(LAYERS[source] ?? []).includes(target)) {
      violations.push({ ...edge, rule: "upward" });
    } else if (source !== target && file !== "mod.ts") {
      violations.push({ ...edge, rule: "not-through-mod" });
    }
  }
  return violations;
}
