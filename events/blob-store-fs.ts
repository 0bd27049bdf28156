/**
 * The filesystem blob store that sits next to an SQLite log: `<dir>/<ab>/<abcdef...>`. Writes go
 * to a temporary file renamed into place, so a crash never leaves a partial blob under its key,
 * and a write that fails removes its temporary file.
 *
 * @example
 * ```ts
 * import { filesystemBlobStore } from "./blob-store-fs.ts";
 *
 * const blobs = filesystemBlobStore(".polyrl/events.blobs");
 * const key = await blobs.put(new Uint8Array([1, 2, 3]));
 * ```
 */
import { BlobNotFoundError } from "./errors.ts";
import { assertBlobKey, type BlobStore, checkBlob, verifiedBlob } from "./blob-store.ts";
import { sha256Hex } from "./hash-chain.ts";

async function readOrUndefined(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
}

/** A blob store in directory `dir` (created on first write). */
export function filesystemBlobStore(dir: string): BlobStore {
  const pathOf = (hash: string) => `${dir}/${hash.slice(0, 2)}/${assertBlobKey(hash)}`;
  return Object.freeze({
    kind: "filesystem" as const,
    async put(bytes: Uint8Array) {
      const hash = sha256Hex(bytes);
      const path = pathOf(hash);
      // An intact copy makes this a no-op; a damaged one is replaced.
      const existing = await readOrUndefined(path);
      if (existing !== undefined && sha256Hex(existing) === hash) return hash;
      await Deno.mkdir(`${dir}/${hash.slice(0, 2)}`, { recursive: true });
      const tmp = `${path}.${crypto.randomUUID()}.tmp`;
      try {
        await Deno.writeFile(tmp, bytes);
        await Deno.rename(tmp, path);
      } catch (err) {
        // A write that failed part way (a full disk, a quota) leaves no partial copy behind.
        await Deno.remove(tmp).catch(() => {});
        throw err;
      }
      return hash;
    },
    async get(hash: string) {
      const bytes = await readOrUndefined(pathOf(hash));
      if (bytes === undefined) throw new BlobNotFoundError(hash);
      return verifiedBlob(hash, bytes);
    },
    async has(hash: string) {
      try {
        return (await Deno.stat(pathOf(hash))).isFile;
      } catch (err) {
        if (err instanceof Deno.errors.NotFound) return false;
        throw err;
      }
    },
    check: (hash: string) => checkBlob((h) => readOrUndefined(pathOf(h)), hash),
  });
}
