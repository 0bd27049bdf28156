/**
 * The files of a projections folder. A generation is a complete, checkpointed DuckDB file named
 * by a sequence number (`000000000007.duckdb`); once renamed into place it is never written
 * again, so any number of processes open it READ_ONLY at once (DuckDB allows one read-write
 * process per file, or many read-only ones). The newest generation is the one to read; the
 * process that makes a new one unlinks the older ones (processes that have one open keep reading
 * it, as POSIX keeps an unlinked file until its last descriptor closes). A generation is built in
 * a `tmp-<uuid>.duckdb` file, written only by the process holding the folder's lock file, so a
 * temporary file found while holding the lock was left by a process that died.
 */

/** The file a projecting process holds an exclusive lock on (see projection-lock.ts). */
export const LOCK_FILE = "lock";

const GENERATION = /^(\d{12})\.duckdb$/;
const TEMPORARY = /^tmp-[0-9a-f-]+\.duckdb(\.wal)?$/;

/** One generation file. */
export interface Generation {
  readonly seq: number;
  readonly path: string;
}

/** What a projections folder holds. */
export interface GenerationListing {
  /** the generation to read, null when there is none yet */
  readonly newest: Generation | null;
  /** generation files older than `newest` */
  readonly superseded: readonly string[];
  /** temporary files of generations being built (or left by a crash) */
  readonly temporary: readonly string[];
}

/**
 * The path of generation `seq` in `folder`.
 *
 * @example
 * ```ts
 * generationPath(".polyrl/events.analysis", 7); // ".polyrl/events.analysis/000000000007.duckdb"
 * ```
 */
export function generationPath(folder: string, seq: number): string {
  return `${folder}/${String(seq).padStart(12, "0")}.duckdb`;
}

/**
 * A fresh path to build a generation in; nothing else is ever written at it.
 *
 * @example
 * ```ts
 * const tmp = temporaryGenerationPath(".polyrl/events.analysis");
 * ```
 */
export function temporaryGenerationPath(folder: string): string {
  return `${folder}/tmp-${crypto.randomUUID()}.duckdb`;
}

/**
 * The generations and temporary files of `folder` (none when it does not exist); other files are
 * not the folder's and are left alone.
 *
 * @example
 * ```ts
 * const { newest } = await listGenerations(".polyrl/events.analysis");
 * if (newest) console.log(`generation ${newest.seq} at ${newest.path}`);
 * ```
 */
export async function listGenerations(folder: string): Promise<GenerationListing> {
  const generations: Generation[] = [];
  const temporary: string[] = [];
  try {
    for await (const entry of Deno.readDir(folder)) {
      if (!entry.isFile) continue;
      const match = GENERATION.exec(entry.name);
      if (match) generations.push({ seq: Number(match[1]), path: `${folder}/${entry.name}` });
      else if (TEMPORARY.test(entry.name)) temporary.push(`${folder}/${entry.name}`);
    }
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  generations.sort((a, b) => a.seq - b.seq);
  const newest = generations.pop() ?? null;
  return { newest, superseded: generations.map((g) => g.path), temporary: temporary.sort() };
}
