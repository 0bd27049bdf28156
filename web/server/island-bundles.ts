/**
 * Builds the islands' browser bundles with ONE `deno bundle` of every entry (esbuild inside Deno;
 * works offline once esbuild is in DENO_DIR), once per process, into a temporary folder.
 *
 * One process, not one per island: on a cold DENO_DIR `deno bundle` first installs esbuild there,
 * and processes installing it at once race (one removes the unpacked package while another
 * still copies the binary out of it: "failed to copy esbuild binary"). A build that failed is
 * not kept: the next call tries again, and meanwhile the dashboard serves its pages without
 * their interactive parts (see `islandsUnavailable`) instead of ending.
 */

/** The islands, by the name `Island` renders; each has web/islands/NAME-entry.ts. */
export const ISLANDS = Object.freeze(["runs-table", "run-live", "chart-set", "sql-console"]);

/** The bundles did not build: what `deno bundle` said, or why it could not run. */
export class IslandBuildError extends Error {
  override name = "IslandBuildError";
  constructor(readonly output: string, options?: ErrorOptions) {
    super(
      `deno bundle of the islands (${ISLANDS.join(", ")}) failed: ${output.trim().slice(-2000)}`,
      options,
    );
  }
}

/** Each island's minified browser bundle, by island name. */
export type IslandBundles = ReadonlyMap<string, Uint8Array<ArrayBuffer>>;

async function bundleAll(): Promise<IslandBundles> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-islands-" });
  try {
    const entries = ISLANDS.map((name) =>
      new URL(`../islands/${name}-entry.ts`, import.meta.url).pathname
    );
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--platform", "browser", "--minify", "--outdir", dir, ...entries],
      // Plain text: the message lands in a log line and on the page.
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!r.success) throw new IslandBuildError(new TextDecoder().decode(r.stderr));
    // esbuild names each output after its entry: NAME-entry.ts -> NAME-entry.js.
    return new Map(
      await Promise.all(
        ISLANDS.map(async (name) =>
          [name, await Deno.readFile(`${dir}/${name}-entry.js`)] as const
        ),
      ),
    );
  } catch (err) {
    if (err instanceof IslandBuildError) throw err;
    throw new IslandBuildError(String(err), { cause: err });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

let built: Promise<IslandBundles> | null = null;
let lastFailure: IslandBuildError | null = null;

/**
 * The bundles, built on first call and shared afterwards. A failed build rejects with
 * IslandBuildError (logged here, once per try) and is forgotten, so the next call builds again;
 * calls while a build runs share it.
 *
 * @example
 * ```ts
 * const js = (await islandBundles()).get("run-live"); // Uint8Array of minified JS
 * ```
 */
export function islandBundles(): Promise<IslandBundles> {
  built ??= bundleAll().then(
    (bundles) => {
      lastFailure = null;
      return bundles;
    },
    (err: IslandBuildError) => {
      built = null;
      lastFailure = err;
      console.error(
        `${err.message}\nPages are served without their interactive parts; ` +
          "the next request for an island's script builds them again.",
      );
      throw err;
    },
  );
  return built;
}

/** Why the islands are unavailable: the last build's error until one succeeds, else null. */
export function islandsUnavailable(): IslandBuildError | null {
  return lastFailure;
}
