import { listGenerations, LOCK_FILE } from "./generation-files.ts";

/**
 * Where a task keeps the projection generations of a store: the folder `analysisPath` names, or,
 * where that folder cannot be written (a store on a read-only mount), a fresh temporary folder
 * removed by `dispose`, seeded with the usual folder's newest generation when it has one so only
 * the events after it are projected. Reading a store needs read rights only.
 *
 * @example
 * ```ts
 * const folder = await projectionsFolder(".polyrl/events.analysis");
 * try {
 *   console.log(folder.temporary ? `projecting into ${folder.path}` : folder.path);
 * } finally {
 *   await folder.dispose();
 * }
 * ```
 */
export async function projectionsFolder(path: string): Promise<ProjectionsFolder> {
  try {
    await Deno.mkdir(path, { recursive: true });
    // The lock file is the one write every projecting process needs: made here, so a folder that
    // can be listed but not written is found now and not half-way through a catch-up.
    (await Deno.open(`${path}/${LOCK_FILE}`, { write: true, create: true })).close();
    return { path, seed: null, temporary: false, dispose: () => Promise.resolve() };
  } catch (err) {
    if (!isUnwritable(err)) throw err;
  }
  const seed = (await listGenerations(path).catch(() => null))?.newest?.path ?? null;
  const temporary = await Deno.makeTempDir({ prefix: "polyrl-analysis-" });
  return {
    path: temporary,
    seed,
    temporary: true,
    dispose: () => Deno.remove(temporary, { recursive: true }).catch(() => {}),
  };
}

/** A projections folder for one task (or one dashboard). */
export interface ProjectionsFolder {
  readonly path: string;
  /** a generation elsewhere to start from when `path` holds none (the read-only folder's newest) */
  readonly seed: string | null;
  /** whether `path` is a temporary folder (removed by `dispose`) rather than the usual one */
  readonly temporary: boolean;
  dispose(): Promise<void>;
}

/** Whether `err` says the place cannot be written (read-only file system, no permission). */
export function isUnwritable(err: unknown): boolean {
  if (err instanceof Deno.errors.PermissionDenied) return true;
  const { code, message } = err as { code?: string; message?: string };
  return code === "EROFS" || code === "EACCES" ||
    /Read-only file system|Permission denied/i.test(message ?? "");
}
