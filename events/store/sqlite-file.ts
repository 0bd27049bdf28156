/**
 * What is at an SQLite store's path, judged from the file's bytes before SQLite opens it: nothing,
 * an empty file, or an SQLite database. A file that is not SQLite, or one cut shorter than its
 * header says it is, is refused here with the reason, so SQLite never gets to touch it.
 *
 * @example
 * ```ts
 * import { inspectSqliteFile } from "./sqlite-file.ts";
 *
 * if ((await inspectSqliteFile("runs.sqlite")) === "missing") console.log("no store yet");
 * ```
 */
import { NotAnEventStoreError, StoreCorruptError } from "../errors.ts";

/** The state of the file at a store path. */
export type SqliteFileState = "missing" | "empty" | "database";

/** Bytes of SQLite's file header (https://sqlite.org/fileformat.html#the_database_header). */
const HEADER_BYTES = 100;
const MAGIC = new TextEncoder().encode("SQLite format 3\0");

async function statOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** The file's first HEADER_BYTES bytes (fewer when it is shorter). */
async function readHeader(file: Deno.FsFile): Promise<Uint8Array> {
  const header = new Uint8Array(HEADER_BYTES);
  let filled = 0;
  while (filled < HEADER_BYTES) {
    const n = await file.read(header.subarray(filled));
    if (n === null) break;
    filled += n;
  }
  return header.subarray(0, filled);
}

const startsWith = (bytes: Uint8Array, prefix: Uint8Array) =>
  prefix.every((b, i) => i >= bytes.length || bytes[i] === b);

/**
 * Looks at `path` without changing it; throws NotAnEventStoreError for a directory or a file
 * that is not SQLite, StoreCorruptError for a truncated database.
 */
export async function inspectSqliteFile(path: string): Promise<SqliteFileState> {
  const info = await statOrUndefined(path);
  if (!info) return "missing";
  if (!info.isFile) throw new NotAnEventStoreError(path, "a directory, not a file");
  if (info.size === 0) return "empty";
  using file = await Deno.open(path, { read: true });
  const header = await readHeader(file);
  if (!startsWith(header, MAGIC)) {
    throw new NotAnEventStoreError(path, "not an SQLite database: no SQLite header");
  }
  if (header.length < HEADER_BYTES) {
    throw new StoreCorruptError(
      path,
      `truncated to ${header.length} bytes, inside the ${HEADER_BYTES}-byte SQLite header`,
    );
  }
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength);
  const rawPageSize = view.getUint16(16);
  const pageSize = rawPageSize === 1 ? 65536 : rawPageSize;
  const pages = view.getUint32(28);
  // The header's page count is valid when its "version-valid-for" equals the change counter.
  // While the -wal file holds frames a writer may be mid-checkpoint (page 1 written before the
  // pages that grow the file): then SQLite's own reads judge the file. Another process may
  // commit and checkpoint while we look, so the order matters: the header first, then the -wal,
  // then the size. A header read mid-checkpoint finds the -wal still holding frames, or, if the
  // checkpoint ended (and the -wal emptied) since, a file already grown to what the header says.
  const countValid = view.getUint32(92) === view.getUint32(24) && pages > 0;
  if (!countValid || ((await statOrUndefined(`${path}-wal`))?.size ?? 0) > 0) return "database";
  const size = (await file.stat()).size;
  if (size < pageSize * pages) {
    throw new StoreCorruptError(
      path,
      `truncated: its header says ${pageSize * pages} bytes (${pages} pages), the file has ` +
        `${size}`,
    );
  }
  return "database";
}
