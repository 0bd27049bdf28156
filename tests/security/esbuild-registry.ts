/**
 * A cold esbuild for `deno bundle`, offline: a local npm registry on 127.0.0.1 that serves only
 * esbuild's platform package (@esbuild/linux-x64 and the like), packed from the esbuild binary
 * Deno already installed in this machine's DENO_DIR. A child given `coldEnv()` (a DENO_DIR of its
 * own without esbuild, NPM_CONFIG_REGISTRY this registry, no built bundles) installs esbuild as a
 * fresh machine does: packument, tarball download, unpack, binary copied out, package folder removed.
 */

/** A running registry. */
export interface EsbuildRegistry extends AsyncDisposable {
  /** e.g. http://127.0.0.1:41234/ */
  readonly url: string;
  /** tarball downloads answered so far */
  readonly downloads: number;
  /** while false, every request is 404 (a registry without the package) */
  available: boolean;
  /**
   * DENO_DIR without esbuild (removed on dispose), NPM_CONFIG_REGISTRY and an empty cache of the
   * dashboard's bundles (POLYRL_ISLANDS_CACHE) for a child; call it while no child given it
   * earlier runs
   */
  coldEnv(): Promise<Record<string, string>>;
}

/** Options of `esbuildRegistry`. */
export interface EsbuildRegistryOptions {
  /**
   * tarball requests answered together: each waits until this many are waiting or `holdMs`
   * passed since the first, as on a network slower than the children that ask (default 1)
   */
  readonly together?: number;
  /** the longest a tarball request waits for the others (default 1000 ms) */
  readonly holdMs?: number;
}

/** The esbuild binary `deno bundle` installed in this machine's DENO_DIR, its version and platform. */
interface InstalledEsbuild {
  readonly path: string;
  readonly version: string;
  readonly platform: string;
}

async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"] }).output();
  return (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir;
}

async function findInstalled(dl: string): Promise<InstalledEsbuild | null> {
  const folders = await Array.fromAsync(Deno.readDir(dl)).catch(() => []);
  for (const folder of folders) {
    // Deno's own layout: dl/esbuild-VERSION-N/esbuild-PLATFORM (cli/tools/bundle/esbuild.rs).
    const version = folder.name.match(/^esbuild-(\d+\.\d+\.\d+)-\d+$/)?.[1];
    if (!version) continue;
    for await (const file of Deno.readDir(`${dl}/${folder.name}`)) {
      const platform = file.name.match(/^esbuild-([a-z0-9]+-[a-z0-9]+)$/)?.[1];
      if (platform) return { path: `${dl}/${folder.name}/${file.name}`, version, platform };
    }
  }
  return null;
}

/**
 * The esbuild Deno installed; where none is yet, one `deno bundle` installs it, as the first
 * dashboard start on this machine does.
 */
async function installedEsbuild(): Promise<InstalledEsbuild> {
  const dl = `${await denoDir()}/dl`;
  const found = await findInstalled(dl);
  if (found) return found;
  const out = await Deno.makeTempDir({ prefix: "polyrl-esbuild-" });
  try {
    const entry = new URL("../../web/islands/runs-table-entry.ts", import.meta.url).pathname;
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["bundle", "--quiet", "--outdir", out, entry],
    }).output();
    if (!r.success) throw new Error(`deno bundle: ${new TextDecoder().decode(r.stderr)}`);
  } finally {
    await Deno.remove(out, { recursive: true });
  }
  const installed = await findInstalled(dl);
  if (!installed) throw new Error(`deno bundle installed no esbuild under ${dl}`);
  return installed;
}

/** The npm tarball of @esbuild/PLATFORM: package/package.json and package/bin/esbuild. */
async function packTarball(esbuild: InstalledEsbuild, dir: string): Promise<Uint8Array> {
  await Deno.mkdir(`${dir}/package/bin`, { recursive: true });
  await Deno.copyFile(esbuild.path, `${dir}/package/bin/esbuild`);
  await Deno.chmod(`${dir}/package/bin/esbuild`, 0o755);
  await Deno.writeTextFile(
    `${dir}/package/package.json`,
    JSON.stringify({ name: `@esbuild/${esbuild.platform}`, version: esbuild.version }),
  );
  const tar = await new Deno.Command("tar", {
    args: ["-czf", `${dir}/package.tgz`, "-C", dir, "package"],
  }).output();
  if (!tar.success) throw new Error(`tar: ${new TextDecoder().decode(tar.stderr)}`);
  return await Deno.readFile(`${dir}/package.tgz`);
}

async function sha512Integrity(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-512", bytes));
  return `sha512-${btoa(String.fromCharCode(...digest))}`;
}

/**
 * Starts the registry. Only Linux and macOS (the tarball holds bin/esbuild, not esbuild.exe).
 *
 * @example
 * ```ts
 * import { esbuildRegistry } from "./esbuild-registry.ts";
 * import { startDashboard } from "./web-server.ts";
 *
 * declare const path: string; // a store
 * await using registry = await esbuildRegistry();
 * await using web = await startDashboard(path, [], await registry.coldEnv());
 * ```
 */
export async function esbuildRegistry(
  options: EsbuildRegistryOptions = {},
): Promise<EsbuildRegistry> {
  const { together = 1, holdMs = 1000 } = options;
  const esbuild = await installedEsbuild();
  const dir = await Deno.makeTempDir({ prefix: "polyrl-esbuild-registry-" });
  const tarball = new Uint8Array(await packTarball(esbuild, dir));
  const integrity = await sha512Integrity(tarball);
  const name = `@esbuild/${esbuild.platform}`;
  let downloads = 0;
  let waiting: (() => void)[] = [];
  const releaseAll = () => {
    for (const release of waiting) release();
    waiting = [];
  };
  const heldTogether = () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length >= together) releaseAll();
      else if (waiting.length === 1) setTimeout(releaseAll, holdMs);
    });
  const registry = {
    available: true,
    get downloads() {
      return downloads;
    },
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req): Promise<Response> => {
      const { origin, pathname } = new URL(req.url);
      const path = decodeURIComponent(pathname);
      if (!registry.available) return new Response("not found", { status: 404 });
      if (path === "/package.tgz") {
        await heldTogether();
        downloads++;
        return new Response(tarball, { headers: { "content-type": "application/octet-stream" } });
      }
      if (path !== `/${name}`) return new Response("not found", { status: 404 });
      return Response.json({
        name,
        "dist-tags": { latest: esbuild.version },
        versions: {
          [esbuild.version]: {
            name,
            version: esbuild.version,
            dist: { tarball: `${origin}/package.tgz`, integrity },
          },
        },
      });
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}/`;
  // One DENO_DIR for every child, so its compiled modules are kept from one to the next; what
  // `deno bundle` installs of esbuild (dl/, npm/) goes before each, so each installs it again.
  const childDenoDir = `${dir}/deno-dir`;
  // The dashboard's cache of built bundles, emptied before each child too, so that it builds.
  const islandsCache = `${dir}/islands-cache`;
  const coldEnv = async () => {
    for (const installed of [`${childDenoDir}/dl`, `${childDenoDir}/npm`, islandsCache]) {
      await Deno.remove(installed, { recursive: true }).catch((err) => {
        if (!(err instanceof Deno.errors.NotFound)) throw err;
      });
    }
    return {
      DENO_DIR: childDenoDir,
      NPM_CONFIG_REGISTRY: url,
      POLYRL_ISLANDS_CACHE: islandsCache,
    };
  };
  return Object.assign(registry, {
    url,
    coldEnv,
    [Symbol.asyncDispose]: async () => {
      releaseAll();
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  });
}
