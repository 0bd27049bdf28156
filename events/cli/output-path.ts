/**
 * The one guard on every path a command writes (`--out` of sql, report, export, export-model,
 * pretrain, docs, study, and each file a command writes inside such a folder): it may not reach
 * an event store, the store's blobs, its projections, or their side files. SQLite's `-wal`,
 * `-shm` and `-journal` files, the blob folder (`x.blobs/`), the projections folder
 * (`x.analysis/`, DuckDB generation files, their `.wal` and lock file) are refused whatever way
 * the path gets there: relative from another directory, through symbolic links (a link whose
 * target is the store, a link to a folder above it, a dangling link to a side file SQLite has not
 * made yet), `..`, or a hard link to one of their files. An existing SQLite or DuckDB database is
 * never overwritten either, whichever store it belongs to.
 *
 * Stores guarded: the command's `--store` and the default store (command.ts applies the guard to
 * every option declared `output: true` before the command runs).
 *
 * @example
 * ```ts
 * import { refuseStoreOutput } from "./output-path.ts";
 *
 * refuseStoreOutput("/tmp/report.md", [".polyrl/events.sqlite"]); // fine
 * refuseStoreOutput(".polyrl/events.sqlite", [".polyrl/events.sqlite"]); // OutputPathError
 * refuseStoreOutput(".polyrl/events.blobs/x.csv", [".polyrl/events.sqlite"]); // OutputPathError
 * ```
 */
import { dirname, isAbsolute, join, resolve } from "node:path";
import { sha256Hex } from "../hash-chain.ts";
import { isPostgresUrl } from "../store/store-target.ts";
import { UsageError } from "./usage-error.ts";

/** An output path the guard refuses: a usage error (exit 2), nothing written. */
export class OutputPathError extends UsageError {
  override name = "OutputPathError";
  constructor(readonly option: string, readonly path: string, readonly reason: string) {
    super(
      `${option} ${path}: refused, nothing written: ${reason}. A command's output never goes ` +
        "to an event store, its blobs or its projections; name a path outside them",
    );
  }
}

/** The files and folders of one store that no output may reach, as the store names them. */
export interface StoreFiles {
  /** the SQLite file and its -wal, -shm and -journal files */
  readonly files: readonly string[];
  /** the blob folder and the projections folder */
  readonly folders: readonly string[];
}

const SQLITE_SIDE_FILES = ["", "-wal", "-shm", "-journal"];

/**
 * The paths of a store target: for an SQLite file `x.sqlite`, itself, `x.sqlite-wal`,
 * `x.sqlite-shm`, `x.sqlite-journal`, `x.blobs/` and `x.analysis/` (as blobDirFor and
 * analysisPath name them); for a Postgres URL, its projections folder under `.polyrl/`.
 *
 * @example
 * ```ts
 * import { storeFiles } from "./output-path.ts";
 *
 * storeFiles("runs.sqlite").folders; // ["runs.blobs", "runs.analysis"]
 * ```
 */
export function storeFiles(target: string): StoreFiles {
  if (isPostgresUrl(target)) {
    const digest = sha256Hex(new TextEncoder().encode(target)).slice(0, 16);
    return { files: [], folders: [`.polyrl/analysis-${digest}`] };
  }
  const base = target.replace(/\.(sqlite3?|db)$/, "");
  return {
    files: SQLITE_SIDE_FILES.map((suffix) => target + suffix),
    folders: [`${base}.blobs`, `${base}.analysis`],
  };
}

/** Most links followed in one path, as Linux's own limit. */
const MAX_LINKS = 40;

/**
 * `path` made absolute (against the working directory) with every symbolic link in it followed,
 * the last component's too, dangling links included (their target is where a write would land);
 * the part that does not exist yet is kept as written, `..` taken after the links before it.
 */
export function resolveLinks(path: string): string {
  const start = isAbsolute(path) ? path : join(Deno.cwd(), path);
  // A stack: the next component is the last element.
  const pending = start.split("/").reverse();
  let current = "/";
  let links = 0;
  let exists = true;
  while (pending.length > 0) {
    const part = pending.pop()!;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    if (exists) {
      let info: Deno.FileInfo | null = null;
      try {
        info = Deno.lstatSync(next);
      } catch {
        // Missing, or not a folder, or not ours to look into: nothing further down exists.
        exists = false;
      }
      if (info?.isSymlink) {
        if (++links > MAX_LINKS) throw new Error(`${path}: more than ${MAX_LINKS} symbolic links`);
        const target = Deno.readLinkSync(next);
        if (isAbsolute(target)) current = "/";
        pending.push(...target.split("/").reverse());
        continue;
      }
    }
    current = next;
  }
  return current;
}

const within = (path: string, folder: string) =>
  path === folder || path.startsWith(folder.endsWith("/") ? folder : folder + "/");

function statOrNull(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

const SQLITE_MAGIC = "SQLite format 3\0";
const DUCKDB_MAGIC = "DUCK";

/** "an SQLite database" / "a DuckDB database" when the file at `path` starts like one. */
function databaseKind(path: string): string | null {
  let head: Uint8Array;
  try {
    using file = Deno.openSync(path, { read: true });
    head = new Uint8Array(16);
    let filled = 0;
    while (filled < head.length) {
      const n = file.readSync(head.subarray(filled));
      if (n === null) break;
      filled += n;
    }
    head = head.subarray(0, filled);
  } catch {
    return null;
  }
  const text = new TextDecoder("latin1").decode(head);
  if (text.startsWith(SQLITE_MAGIC)) return "an SQLite database";
  // DuckDB's header: an 8-byte checksum, then the magic bytes.
  if (text.slice(8, 12) === DUCKDB_MAGIC) return "a DuckDB database";
  return null;
}

/** Every file under `folder` (links not followed), for the hard-link check. */
function* filesUnder(folder: string): Generator<string> {
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(folder)];
  } catch {
    return;
  }
  for (const entry of entries) {
    const path = join(folder, entry.name);
    if (entry.isDirectory) yield* filesUnder(path);
    else if (entry.isFile) yield path;
  }
}

const sameFile = (a: Deno.FileInfo, b: Deno.FileInfo | null) =>
  b !== null && a.ino !== null && a.dev === b.dev && a.ino === b.ino;

/**
 * Throws OutputPathError when writing `path` (a file, or a folder the command writes into) could
 * change one of `stores` (targets as given to `--store`: paths or postgres:// URLs) or an
 * existing database. `option` names the option in the message.
 *
 * @example
 * ```ts
 * import { DEFAULT_STORE } from "./command.ts";
 * import { refuseStoreOutput } from "./output-path.ts";
 *
 * declare const values: { out: string; store: string }; // the parsed options
 * refuseStoreOutput(values.out, [values.store, DEFAULT_STORE], "--out");
 * ```
 */
export function refuseStoreOutput(
  path: string,
  stores: readonly string[],
  option = "--out",
): void {
  const out = resolveLinks(path);
  const refuse = (reason: string): never => {
    throw new OutputPathError(option, path, reason);
  };
  const protectedFiles: { path: string; what: string }[] = [];
  const protectedFolders: { path: string; what: string }[] = [];
  for (const store of new Set(stores)) {
    const shown = JSON.stringify(store);
    // The store as named and as its links resolve: SQLite names its side files after the file
    // it opens, the blob and projections folders are named after the path as given.
    const named = isPostgresUrl(store)
      ? [store]
      : [...new Set([resolve(store), resolveLinks(store)])];
    for (const target of named) {
      const { files, folders } = storeFiles(target);
      files.forEach((file, i) =>
        protectedFiles.push({
          path: resolveLinks(file),
          what: i === 0
            ? `the event store ${shown}`
            : `the ${SQLITE_SIDE_FILES[i]} file of the event store ${shown}`,
        })
      );
      folders.forEach((folder) =>
        protectedFolders.push({
          path: resolveLinks(folder),
          what: folder.endsWith(".blobs")
            ? `the blob folder of the event store ${shown}`
            : `the projections folder of the event store ${shown}`,
        })
      );
    }
  }
  for (const file of protectedFiles) {
    if (out === file.path) refuse(`it is ${file.what}`);
  }
  for (const folder of protectedFolders) {
    if (within(out, folder.path)) refuse(`it is in ${folder.what}`);
  }
  const info = statOrNull(out);
  if (info?.isFile) {
    if (info.nlink !== null && info.nlink > 1) {
      for (const file of protectedFiles) {
        if (sameFile(info, statOrNull(file.path))) refuse(`it is a hard link to ${file.what}`);
      }
      for (const folder of protectedFolders) {
        for (const file of filesUnder(folder.path)) {
          if (sameFile(info, statOrNull(file))) refuse(`it is a hard link into ${folder.what}`);
        }
      }
    }
    const database = databaseKind(out);
    if (database) refuse(`it is ${database}, which no output overwrites`);
  }
}
