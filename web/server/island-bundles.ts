/**
 * Builds the islands' browser bundles with ONE `deno bundle` of every entry (esbuild inside Deno;
 * works offline once esbuild is in DENO_DIR) and keeps them in a cache folder, keyed by what the
 * bundles are made of, so that a dashboard started again serves them without building.
 *
 * One process, not one per island: on a cold DENO_DIR `deno bundle` first installs esbuild there,
 * and processes installing it at once race (one removes the unpacked package while another
 * still copies the binary out of it: "failed to copy esbuild binary"). A build that failed is
 * not kept: the next call tries again, and meanwhile the dashboard serves its pages without
 * their interactive parts (see `islandsUnavailable`) instead of ending.
 *
 * The cache (about 1.2 CPU seconds saved per start) is `.polyrl/islands/` in this checkout, or
 * $POLYRL_ISLANDS_CACHE. Its key is a SHA-256 of Deno's version, the bundle's options, deno.lock
 * (the npm packages the islands import) and every file under ISLAND_SOURCE_ROOTS, which hold every
 * local module of the islands' graph (tests/web/island-cache_test.ts checks that against `deno
 * info`). A cache that cannot be read or written is no cache: the bundles are built as before.
 */
import { createHash } from "node:crypto";
import { join } from "node:path";

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

const CHECKOUT = new URL("../../", import.meta.url);

/** The folders (of the checkout) that hold every local module the islands import. */
export const ISLAND_SOURCE_ROOTS = Object.freeze(["web/", "analysis/", "events/"]);

const BUNDLE_OPTIONS = ["--quiet", "--platform", "browser", "--minify"];

/** Where bundles are kept: $POLYRL_ISLANDS_CACHE, else .polyrl/islands/ of this checkout. */
function islandsCacheDir(): string {
  return Deno.env.get("POLYRL_ISLANDS_CACHE") ??
    new URL(".polyrl/islands/", CHECKOUT).pathname;
}

/** The files of a folder, at any depth, sorted. */
async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) files.push(...await filesUnder(path));
    else if (e.isFile) files.push(path);
  }
  return files.sort();
}

/** The cache key of the bundles this checkout builds (see the module's comment). */
export async function islandSourcesKey(): Promise<string> {
  const root = CHECKOUT.pathname;
  const files = [
    "deno.lock",
    ...(await Promise.all(
      ISLAND_SOURCE_ROOTS.map((r) => filesUnder(join(root, r))),
    )).flat().map((f) => f.slice(root.length)),
  ];
  const contents = await Promise.all(files.map((f) => Deno.readFile(join(root, f))));
  const hash = createHash("sha256");
  // The names and lengths first, so that no two sets of files hash alike.
  hash.update(JSON.stringify([
    Deno.version.deno,
    BUNDLE_OPTIONS,
    ISLANDS,
    files.map((f, i) => [f, contents[i].length]),
  ]));
  for (const bytes of contents) hash.update(bytes);
  return hash.digest("hex").slice(0, 32);
}

/** Each island's bundle from a folder holding NAME-entry.js for each (esbuild's names). */
async function readBundles(dir: string): Promise<IslandBundles> {
  return new Map(
    await Promise.all(
      ISLANDS.map(async (name) => [name, await Deno.readFile(`${dir}/${name}-entry.js`)] as const),
    ),
  );
}

/** Runs `deno bundle` of every island into `dir`. */
async function bundleInto(dir: string): Promise<void> {
  const entries = ISLANDS.map((name) =>
    new URL(`../islands/${name}-entry.ts`, import.meta.url).pathname
  );
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", ...BUNDLE_OPTIONS, "--outdir", dir, ...entries],
    // Plain text: the message lands in a log line and on the page.
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!r.success) throw new IslandBuildError(new TextDecoder().decode(r.stderr));
}

/** A build folder untouched for 10 minutes: its process ended before moving it into the cache. */
async function abandoned(dir: string): Promise<boolean> {
  const { mtime } = await Deno.stat(dir);
  return mtime !== null && Date.now() - mtime.getTime() > 10 * 60_000;
}

/**
 * Moves a finished build into the cache as `key`, and removes the cache's other keys (builds of
 * other sources, never served again here) and abandoned builds. Another process that put the
 * same key there first wins; any failure leaves the cache as it was, and is no error of the
 * dashboard's.
 */
async function keep(built: string, cache: string, key: string): Promise<void> {
  try {
    await Deno.rename(built, join(cache, key)).catch(() => {});
    for await (const e of Deno.readDir(cache)) {
      if (e.name === key || (e.name.startsWith(".") && !await abandoned(join(cache, e.name)))) {
        continue;
      }
      await Deno.remove(join(cache, e.name), { recursive: true }).catch(() => {});
    }
  } catch {
    // A read-only checkout or a full disk: the next start builds again.
  }
}

async function bundleAll(): Promise<IslandBundles> {
  const cache = islandsCacheDir();
  const key = await islandSourcesKey().catch(() => null);
  if (key !== null) {
    const cached = await readBundles(join(cache, key)).catch(() => null);
    if (cached) return cached;
  }
  // Built beside the cache, so that moving the result in is a rename; in the system's temporary
  // folder when the cache cannot be written.
  await Deno.mkdir(cache, { recursive: true }).catch(() => {});
  const dir = await Deno.makeTempDir({ dir: cache, prefix: ".build-" })
    .catch(() => Deno.makeTempDir({ prefix: "polyrl-islands-" }));
  try {
    await bundleInto(dir);
    const bundles = await readBundles(dir);
    if (key !== null) await keep(dir, cache, key);
    return bundles;
  } catch (err) {
    if (err instanceof IslandBuildError) throw err;
    throw new IslandBuildError(String(err), { cause: err });
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
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
