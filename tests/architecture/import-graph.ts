/**
 * The import graph of the project's source folders, read from the files themselves, and the
 * rules it must follow (docs/ARCHITECTURE.md, "Layers"):
 *
 * - a folder imports only from the layers beneath it (`LAYERS`);
 * - an import into another top-level folder goes through a `mod.ts` (that folder's own, or one of
 *   its sub-folders'): everything else is that folder's private business;
 * - a file never imports the `mod.ts` of a folder it lives in: that barrel re-exports the file's
 *   neighbours, so the import closes a circle through it (`ownBarrelImports`); a user's module
 *   kept as an example (under an `examples/` folder, imported by no source file) imports the public
 *   face as a user's code would;
 * - the sub-folders of one folder do not import each other in a circle (`subFolderCycles`);
 * - an import into a sub-folder that has a `mod.ts`, from outside that sub-folder, goes through a
 *   `mod.ts` too (`subFolderBypasses`), as between top-level folders.
 *
 * @example
 * ```ts
 * const violations = findViolations(await readImportGraph("."));
 * for (const v of violations) console.log(`${v.from} -> ${v.to}: ${v.rule}`);
 * ```
 */
import { basename, dirname, join, normalize } from "node:path";

/** The source folders and, for each, the folders it may import from. */
export const LAYERS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  events: [],
  adapters: ["events"],
  engine: ["events", "adapters"],
  analysis: ["events"],
  web: ["events", "analysis"],
  study: ["events", "engine", "analysis"],
});

/** One relative import: the importing file and the file it names, both repository-relative. */
export interface ImportEdge {
  readonly from: string;
  readonly to: string;
}

/** A broken rule, named for the report. */
export interface Violation extends ImportEdge {
  readonly rule: "upward" | "not-through-mod";
}

/**
 * `source` without its block comments: a doc example imports as a user would (from a folder's
 * `mod.ts`, its own included), which is no import of the file's.
 */
function withoutBlockComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "");
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
      const text = withoutBlockComments(await Deno.readTextFile(join(root, from)));
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
    if (source !== target && !(LAYERS[source] ?? []).includes(target)) {
      violations.push({ ...edge, rule: "upward" });
    } else if (source !== target && basename(edge.to) !== "mod.ts") {
      violations.push({ ...edge, rule: "not-through-mod" });
    }
  }
  return violations;
}

/**
 * The imports of a `mod.ts` by a file inside that `mod.ts`'s folder (sub-folders included), but
 * those of an example of a user's module: a file in an `examples/` folder that no file imports
 * (`engine/workflows/examples/planner-executors.ts`, a custom workflow that configs name by path)
 * imports the folder's public face as a user's code would, and no barrel reaches it, so its import
 * closes no circle. An example that a source file imports is internal code again.
 */
export function ownBarrelImports(edges: readonly ImportEdge[]): ImportEdge[] {
  const imported = new Set(edges.map((e) => e.to));
  const userExample = (path: string) =>
    dirname(path).split("/").includes("examples") && !imported.has(path);
  return edges.filter((e) =>
    basename(e.to) === "mod.ts" && e.from.startsWith(`${dirname(e.to)}/`) && !userExample(e.from)
  );
}

/**
 * The folders that import each other in a circle, among the sub-folders of one folder: each circle
 * as its folders, sorted. An import counts for the two sub-folders of the deepest folder that holds
 * both files, where each file lies in one (a file directly in that folder, a `mod.ts` say, joins
 * no circle).
 */
export function subFolderCycles(edges: readonly ImportEdge[]): string[][] {
  const imports = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const source = subFolderOf(from, to);
    const target = subFolderOf(to, from);
    if (source === null || target === null) continue;
    imports.set(source, (imports.get(source) ?? new Set()).add(target));
  }
  const reachable = (start: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [start];
    while (stack.length > 0) {
      for (const next of imports.get(stack.pop()!) ?? []) {
        if (seen.has(next)) continue;
        seen.add(next);
        stack.push(next);
      }
    }
    return seen;
  };
  const reach = new Map([...imports.keys()].map((folder) => [folder, reachable(folder)]));
  const cycles = new Map<string, string[]>();
  for (const [folder, reached] of reach) {
    if (!reached.has(folder)) continue;
    const cycle = [...reached].filter((other) => reach.get(other)?.has(folder)).sort();
    cycles.set(cycle.join(), cycle);
  }
  return [...cycles.values()].sort((x, y) => x[0].localeCompare(y[0]));
}

/**
 * The imports that enter a sub-folder holding a `mod.ts` from elsewhere in the same top-level
 * folder and name a file other than a `mod.ts` (between top-level folders, `findViolations`
 * reports them). The folders entered are those that hold the imported file but not the
 * importing one; a folder holds a `mod.ts` when one of `edges` names it.
 */
export function subFolderBypasses(edges: readonly ImportEdge[]): ImportEdge[] {
  const barrels = new Set(
    edges.flatMap((e) => [e.from, e.to]).filter((p) => basename(p) === "mod.ts").map(dirname),
  );
  return edges.filter(({ from, to }) => {
    const entered = subFolderOf(to, from);
    if (entered === null || !entered.includes("/") || basename(to) === "mod.ts") return false;
    for (let folder = dirname(to); folder.length >= entered.length; folder = dirname(folder)) {
      if (barrels.has(folder)) return true;
    }
    return false;
  });
}

/**
 * The folder holding `path` one level below the deepest folder that also holds `other`; null when
 * `path` lies directly in that folder.
 */
function subFolderOf(path: string, other: string): string | null {
  const a = path.split("/");
  const b = other.split("/");
  let shared = 0;
  while (shared < a.length - 1 && shared < b.length - 1 && a[shared] === b[shared]) shared++;
  return shared === a.length - 1 ? null : a.slice(0, shared + 1).join("/");
}
