/**
 * Reads safetensors files lazily: opening reads only the length prefix and the JSON header; each
 * tensor is then read from its own byte range, so a caller that wants a few tensors of a large
 * file never holds the rest in memory.
 */
import { regularFileSize, type SymlinkPolicy } from "../../events/files/mod.ts";
import { assertLittleEndianHost, decodeFloats, FLOAT_DTYPES, isFloatDtype } from "./dtype.ts";
import { CorruptSafetensorsError, MissingFileError, UnsupportedDtypeError } from "./errors.ts";
import {
  MAX_HEADER_BYTES,
  parseSafetensorsHeader,
  type SafetensorsEntry,
  type SafetensorsHeader,
} from "./safetensors-header.ts";
import { type NamedTensor, namedTensor } from "./tensor.ts";

/** An open safetensors file. Call `close()` when done (or use `using`). */
export interface SafetensorsFile extends Disposable {
  readonly path: string;
  readonly header: SafetensorsHeader;
  /** Tensor names in sorted order. */
  names(): string[];
  /** Reads one tensor's byte range and widens it to float32. */
  read(name: string): Promise<NamedTensor>;
  close(): void;
}

/**
 * Opens `path` and parses its header; throws MissingFileError / CorruptSafetensorsError, and
 * FileReadError for what is not a regular file (a FIFO would never answer the open) or, with
 * `symlinks: "refuse"` (the files of an adapter folder a server reads), for a link.
 * @example
 * ```ts
 * import { openSafetensors } from "./safetensors-reader.ts";
 *
 * using f = await openSafetensors("model.safetensors");
 * const emb = await f.read("model.embed_tokens.weight");
 * ```
 */
export async function openSafetensors(
  path: string,
  options: { symlinks?: SymlinkPolicy } = {},
): Promise<SafetensorsFile> {
  assertLittleEndianHost();
  let file: Deno.FsFile;
  try {
    // No size limit: each tensor is read on its own, and the header must fit the file's size.
    await regularFileSize(path, { maxBytes: Infinity, symlinks: options.symlinks });
    file = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new MissingFileError(path, "a safetensors checkpoint file");
    }
    throw e;
  }
  try {
    const size = (await file.stat()).size;
    if (size < 8) {
      throw new CorruptSafetensorsError(
        path,
        `file has ${size} bytes, fewer than the 8-byte prefix`,
      );
    }
    const prefix = await readRange(file, 0, 8, path);
    const headerLength = Number(new DataView(prefix.buffer).getBigUint64(0, true));
    if (headerLength > MAX_HEADER_BYTES) {
      throw new CorruptSafetensorsError(
        path,
        `header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte limit`,
      );
    }
    if (8 + headerLength > size) {
      throw new CorruptSafetensorsError(
        path,
        `truncated: header length ${headerLength} runs past the end of the ${size}-byte file`,
      );
    }
    const header = parseSafetensorsHeader(path, await readRange(file, 8, headerLength, path), size);
    return fileHandle(path, file, header);
  } catch (e) {
    file.close();
    throw e;
  }
}

function fileHandle(path: string, file: Deno.FsFile, header: SafetensorsHeader): SafetensorsFile {
  let open = true;
  const close = () => {
    if (open) file.close();
    open = false;
  };
  return Object.freeze({
    path,
    header,
    names: () => [...header.entries.keys()],
    read: async (name: string) => {
      const entry = header.entries.get(name);
      if (entry === undefined) {
        throw new RangeError(`tensor ${name} is not in ${path}`);
      }
      return decodeEntry(entry, await readRange(file, entry.start, entry.byteLength, path));
    },
    close,
    [Symbol.dispose]: close,
  });
}

function decodeEntry(entry: SafetensorsEntry, bytes: Uint8Array): NamedTensor {
  if (!isFloatDtype(entry.dtype)) {
    throw new UnsupportedDtypeError(entry.name, entry.dtype, FLOAT_DTYPES);
  }
  return namedTensor(entry.name, entry.shape, decodeFloats(bytes, entry.dtype), entry.dtype);
}

async function readRange(
  file: Deno.FsFile,
  start: number,
  length: number,
  path: string,
): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  await file.seek(start, Deno.SeekMode.Start);
  let filled = 0;
  while (filled < length) {
    const n = await file.read(out.subarray(filled));
    if (n === null) {
      throw new CorruptSafetensorsError(
        path,
        `truncated: wanted bytes ${start}..${start + length}, file ended at ${start + filled}`,
      );
    }
    filled += n;
  }
  return out;
}
