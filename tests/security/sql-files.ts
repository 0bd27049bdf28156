/**
 * The files an attack must leave alone: a filled SQLite store (the dashboard fixture's five
 * runs) with its projections beside it, and a SHA-256 of every file under a folder, so a test
 * can assert that the store and the projections are byte-identical after the attacks.
 */
import { fillDashboardStore } from "../web/fixtures/dashboard-store.ts";

/** A store in a fresh temp folder; `target` is an empty folder attacks try to write into. */
export interface AttackedStore extends AsyncDisposable {
  readonly dir: string;
  readonly path: string;
  readonly target: string;
}

/**
 * Fills a store and makes the target folder; disposing removes both.
 *
 * @example
 * ```ts
 * import { attackedStore, fileDigests } from "./sql-files.ts";
 *
 * await using store = await attackedStore();
 * const before = await fileDigests(store.dir);
 * ```
 */
export async function attackedStore(): Promise<AttackedStore> {
  const { dir, path } = await fillDashboardStore();
  const target = await Deno.makeTempDir({ prefix: "polyrl-attack-target-" });
  const dispose = async () => {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(target, { recursive: true });
  };
  return { dir, path, target, [Symbol.asyncDispose]: dispose };
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * `relative path -> sha256` of every file under `dir` (folders are walked, so a new folder with
 * a file in it shows; an empty new folder shows as `path/`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fileDigests } from "./sql-files.ts";
 *
 * declare const dir: string;
 * const before = await fileDigests(dir);
 * // the attack runs here
 * assert.deepEqual(await fileDigests(dir), before);
 * ```
 */
export async function fileDigests(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (sub: string) => {
    let empty = true;
    for await (const entry of Deno.readDir(`${dir}/${sub}`)) {
      empty = false;
      const rel = sub ? `${sub}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(rel);
      else out[rel] = await sha256(`${dir}/${rel}`);
    }
    if (empty && sub) out[`${sub}/`] = "(empty folder)";
  };
  await walk("");
  return out;
}
