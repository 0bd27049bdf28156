/**
 * Reading a file a user named (a tasks or benchmark file, a model's or an adapter's JSON) without
 * trusting what is at that path: only a regular file is read, never a FIFO (an open that never
 * returns), a device (`/dev/zero` grows memory without bound) or a folder; only up to a size
 * limit, checked before and while reading; and an error never quotes the file's contents (a link
 * to /etc/passwd must not put its first line into a message a client reads).
 */

/** Where symbolic links may lead: anywhere (then the target must be a regular file), or nowhere. */
export type SymlinkPolicy = "follow" | "refuse";

/** What one read accepts. */
export interface ReadLimits {
  /** Largest file read, in bytes. */
  readonly maxBytes: number;
  /**
   * "follow" (default) for a path the user gave, which may be a link (Hugging Face's cache links
   * each file to its blob); "refuse" for the files inside a folder a server was pointed at,
   * where a link could lead out of it.
   */
  readonly symlinks?: SymlinkPolicy;
}

/** A file that is not a regular file, is over its limit, or does not hold JSON. */
export class FileReadError extends Error {
  constructor(readonly path: string, readonly reason: string) {
    super(`${path} ${reason}`);
    this.name = "FileReadError";
  }
}

const UNITS: readonly (readonly [string, number])[] = [
  ["GiB", 1024 ** 3],
  ["MiB", 1024 ** 2],
  ["KiB", 1024],
];

/** "12.5 MiB" for messages. */
function sizeText(bytes: number): string {
  for (const [unit, scale] of UNITS) {
    if (bytes >= scale) return `${Number((bytes / scale).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

function kindOf(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a folder";
  if (info.isSymlink) return "a symbolic link";
  if (info.isFifo) return "a FIFO";
  if (info.isCharDevice || info.isBlockDevice) return "a device";
  if (info.isSocket) return "a socket";
  return "not a file";
}

function overLimit(path: string, size: string, maxBytes: number): FileReadError {
  return new FileReadError(
    path,
    `is ${size}, over the ${sizeText(maxBytes)} limit on this file (${maxBytes} bytes)`,
  );
}

/**
 * The size of `path` once it is known to be a regular file within `limits`; Deno.errors.NotFound
 * when nothing is there (callers tell the user which file was expected), FileReadError otherwise.
 * For files read in ranges (safetensors), which are then checked against their own header.
 *
 * @example
 * ```ts
 * import { regularFileSize } from "./regular-file.ts";
 *
 * const size = await regularFileSize("model.safetensors", { maxBytes: Infinity });
 * ```
 */
export async function regularFileSize(path: string, limits: ReadLimits): Promise<number> {
  let info: Deno.FileInfo;
  try {
    info = limits.symlinks === "refuse" ? await Deno.lstat(path) : await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) throw err;
    throw new FileReadError(path, `cannot be read (${(err as Error).message})`);
  }
  if (!info.isFile) {
    const only = limits.symlinks === "refuse" && info.isSymlink
      ? "; links are not followed here"
      : "; give a regular file";
    throw new FileReadError(path, `is ${kindOf(info)}, not a regular file${only}`);
  }
  if (info.size > limits.maxBytes) throw overLimit(path, sizeText(info.size), limits.maxBytes);
  return info.size;
}

/**
 * The bytes of a regular file of at most `limits.maxBytes`; throws as regularFileSize, and
 * FileReadError if the file grows past the limit while it is read.
 *
 * @example
 * ```ts
 * import { readRegularFile } from "./regular-file.ts";
 *
 * const bytes = await readRegularFile("tasks.jsonl", { maxBytes: 256 * 1024 ** 2 });
 * ```
 */
export async function readRegularFile(path: string, limits: ReadLimits): Promise<Uint8Array> {
  const size = await regularFileSize(path, limits);
  using file = await Deno.open(path, { read: true });
  // One byte more than the size looked at: a file that grew since shows it, and is read on up to
  // the limit.
  let out = new Uint8Array(Math.min(size, limits.maxBytes) + 1);
  let filled = 0;
  while (true) {
    const n = await file.read(out.subarray(filled));
    if (n === null) return out.subarray(0, filled);
    filled += n;
    if (filled > limits.maxBytes) throw overLimit(path, "growing", limits.maxBytes);
    if (filled === out.length) {
      const grown = new Uint8Array(Math.min(2 * out.length, limits.maxBytes + 1));
      grown.set(out);
      out = grown;
    }
  }
}

/**
 * The text (UTF-8) of a regular file of at most `limits.maxBytes`.
 *
 * @example
 * ```ts
 * import { readRegularTextFile } from "./regular-file.ts";
 *
 * const text = await readRegularTextFile("aime24.jsonl", { maxBytes: 256 * 1024 ** 2 });
 * ```
 */
export async function readRegularTextFile(path: string, limits: ReadLimits): Promise<string> {
  return new TextDecoder().decode(await readRegularFile(path, limits));
}

/**
 * Where `JSON.parse` failed, from its error, without the text there: V8's own message quotes the
 * input ("Unexpected token 'r', "root:x:0:0"... is not valid JSON"), which must not reach an
 * error a client reads. Null when V8 gave no place.
 *
 * @example
 * ```ts
 * import { jsonErrorPlace } from "./regular-file.ts";
 *
 * jsonErrorPlace(new SyntaxError("... at position 8 (line 1 column 9)")); // { line: 1, column: 9 }
 * ```
 */
export function jsonErrorPlace(err: unknown): { line: number; column: number } | null {
  const m = (err as Error).message?.match(/line (\d+) column (\d+)/);
  return m ? { line: Number(m[1]), column: Number(m[2]) } : null;
}

/**
 * The parsed JSON of a regular file of at most `limits.maxBytes`. Invalid JSON is a FileReadError
 * naming the line and column where V8 says, never the text there.
 *
 * @example
 * ```ts
 * import { join } from "node:path";
 * import { readJsonFile } from "./regular-file.ts";
 *
 * declare const dir: string; // an adapter's folder
 * const config = await readJsonFile(join(dir, "adapter_config.json"), { maxBytes: 1 << 20 });
 * ```
 */
export async function readJsonFile(path: string, limits: ReadLimits): Promise<unknown> {
  const text = await readRegularTextFile(path, limits);
  try {
    return JSON.parse(text);
  } catch (err) {
    const place = jsonErrorPlace(err);
    const where = place ? ` at line ${place.line} column ${place.column}` : "";
    throw new FileReadError(path, `is not valid JSON${where}`);
  }
}
