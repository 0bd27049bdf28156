/**
 * Builds the islands' browser bundles with `deno bundle` (esbuild inside Deno; works offline
 * once esbuild is in the npm cache), once per process, into a temporary folder.
 */

/** The islands, by the name `Island` renders; each has web/islands/NAME-entry.ts. */
export const ISLANDS = Object.freeze(["runs-table", "run-live", "chart-set", "sql-console"]);

/** A bundle that did not build: the island's name and what `deno bundle` said. */
export class IslandBuildError extends Error {
  override name = "IslandBuildError";
  constructor(readonly island: string, readonly output: string) {
    super(`deno bundle failed for island ${island}: ${output.trim().slice(-2000)}`);
  }
}

let built: Promise<ReadonlyMap<string, Uint8Array<ArrayBuffer>>> | null = null;

async function buildAll(): Promise<ReadonlyMap<string, Uint8Array<ArrayBuffer>>> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-islands-" });
  try {
    const out = new Map<string, Uint8Array<ArrayBuffer>>();
    await Promise.all(ISLANDS.map(async (name) => {
      const entry = new URL(`../islands/${name}-entry.ts`, import.meta.url).pathname;
      const file = `${dir}/${name}.js`;
      const r = await new Deno.Command(Deno.execPath(), {
        args: ["bundle", "--quiet", "--platform", "browser", "--minify", "-o", file, entry],
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!r.success) {
        throw new IslandBuildError(name, new TextDecoder().decode(r.stderr));
      }
      out.set(name, await Deno.readFile(file));
    }));
    return out;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * The bundles, built on first call and shared afterwards.
 *
 * @example
 * ```ts
 * const js = (await islandBundles()).get("run-live"); // Uint8Array of minified JS
 * ```
 */
export function islandBundles(): Promise<ReadonlyMap<string, Uint8Array<ArrayBuffer>>> {
  built ??= buildAll().catch((err) => {
    built = null;
    throw err;
  });
  return built;
}
