/**
 * Where a task keeps the DuckDB projections of a store: the file `analysisPath` names, or, where
 * that folder cannot be written (a store on a read-only mount), a file in a fresh temporary folder
 * that is removed when the task ends. Reading a store needs read rights only.
 *
 * @example
 * ```ts
 * const file = await projectionsFile(".polyrl/events.analysis.duckdb");
 * const instance = await DuckDBInstance.create(file.path);
 * ```
 */

/** A projections file for one task. */
export interface ProjectionsFile {
  readonly path: string;
  /** whether `path` is a temporary file (removed by `dispose`) rather than the usual one */
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

/** A temporary projections file, removed (with its folder) by `dispose`. */
export async function temporaryProjectionsFile(): Promise<ProjectionsFile> {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-analysis-" });
  return {
    path: `${dir}/analysis.duckdb`,
    temporary: true,
    dispose: () => Deno.remove(dir, { recursive: true }).catch(() => {}),
  };
}

/** `path`, with its folder made; a temporary file when that folder cannot be made. */
export async function projectionsFile(path: string): Promise<ProjectionsFile> {
  const folder = path.replace(/[^/]*$/, "");
  try {
    if (folder) await Deno.mkdir(folder, { recursive: true });
  } catch (err) {
    if (isUnwritable(err)) return await temporaryProjectionsFile();
    throw err;
  }
  return { path, temporary: false, dispose: () => Promise.resolve() };
}
