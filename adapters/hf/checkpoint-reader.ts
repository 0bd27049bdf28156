/**
 * The tensors of an HF model directory, single-file (`model.safetensors`) or sharded
 * (`model.safetensors.index.json` + the shards its `weight_map` names). Shards open lazily, and a
 * tensor is read only when asked for.
 */
import { join } from "node:path";
import { FileReadError, readJsonFile } from "../../events/files/mod.ts";
import { CorruptSafetensorsError, MissingFileError, MissingTensorError } from "./errors.ts";
import { exists, MODEL_JSON_MAX_BYTES } from "./file-exists.ts";
import { openSafetensors, type SafetensorsFile } from "./safetensors-reader.ts";
import type { NamedTensor } from "./tensor.ts";

/** File names the HF convention uses for model weights. */
export const SINGLE_FILE = "model.safetensors";
export const INDEX_FILE = "model.safetensors.index.json";

/** Shape and dtype of a tensor, known from headers without reading its data. */
export interface TensorInfo {
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  readonly file: string;
}

/** An open checkpoint; `close()` releases every shard it opened. */
export interface CheckpointSource extends Disposable {
  readonly dir: string;
  /** Files the weights live in, relative to `dir`. */
  readonly files: readonly string[];
  /** Header facts of every tensor, sorted by name (opens every shard's header). */
  info(): Promise<TensorInfo[]>;
  read(name: string): Promise<NamedTensor>;
  /** Reads every tensor, or those `keep` accepts, one byte range at a time. */
  readAll(keep?: (name: string) => boolean): Promise<Map<string, NamedTensor>>;
  close(): void;
}

/**
 * Opens the weights of a model directory.
 * @example
 * ```ts
 * import { openCheckpoint } from "./checkpoint-reader.ts";
 *
 * using ckpt = await openCheckpoint("/models/Qwen2.5-0.5B");
 * const tensors = await ckpt.readAll();
 * ```
 */
export async function openCheckpoint(dir: string): Promise<CheckpointSource> {
  const indexPath = join(dir, INDEX_FILE);
  const weightMap = (await exists(indexPath))
    ? await readIndex(indexPath)
    : (await exists(join(dir, SINGLE_FILE)))
    ? null
    : missingWeights(dir);
  const files = weightMap === null ? [SINGLE_FILE] : [...new Set(weightMap.values())].sort();
  const opened = new Map<string, SafetensorsFile>();
  const shard = async (file: string, why: string): Promise<SafetensorsFile> => {
    const cached = opened.get(file);
    if (cached) return cached;
    const path = join(dir, file);
    if (!(await exists(path))) throw new MissingFileError(path, why);
    const f = await openSafetensors(path);
    opened.set(file, f);
    return f;
  };
  const shardOf = async (name: string): Promise<SafetensorsFile> => {
    if (weightMap === null) return await shard(SINGLE_FILE, "the model weights");
    const file = weightMap.get(name);
    if (file === undefined) throw new MissingTensorError(name, join(dir, INDEX_FILE));
    const f = await shard(file, `the shard ${INDEX_FILE} lists for tensor ${name}`);
    if (!f.header.entries.has(name)) {
      throw new MissingTensorError(name, `${f.path} (the shard ${INDEX_FILE} names for it)`);
    }
    return f;
  };
  const names = async (): Promise<string[]> => {
    if (weightMap !== null) return [...weightMap.keys()].sort();
    return (await shard(SINGLE_FILE, "the model weights")).names();
  };
  const close = () => {
    for (const f of opened.values()) f.close();
    opened.clear();
  };
  return Object.freeze({
    dir,
    files: Object.freeze(files),
    info: async () => {
      const out: TensorInfo[] = [];
      for (const name of await names()) {
        const f = await shardOf(name);
        const e = f.header.entries.get(name)!;
        out.push(Object.freeze({ name, dtype: e.dtype, shape: e.shape, file: f.path }));
      }
      return out;
    },
    read: async (name: string) => {
      const f = await shardOf(name);
      if (!f.header.entries.has(name)) throw new MissingTensorError(name, f.path);
      return await f.read(name);
    },
    readAll: async (keep: (name: string) => boolean = () => true) => {
      const out = new Map<string, NamedTensor>();
      for (const name of await names()) {
        if (keep(name)) out.set(name, await (await shardOf(name)).read(name));
      }
      return out;
    },
    close,
    [Symbol.dispose]: close,
  });
}

function missingWeights(dir: string): never {
  throw new MissingFileError(
    join(dir, SINGLE_FILE),
    `the model weights (or a sharded ${INDEX_FILE} with its shards) in ${dir}`,
  );
}

async function readIndex(path: string): Promise<Map<string, string>> {
  let json: unknown;
  try {
    json = await readJsonFile(path, { maxBytes: MODEL_JSON_MAX_BYTES });
  } catch (e) {
    if (!(e instanceof FileReadError)) throw e;
    throw new CorruptSafetensorsError(path, `index ${e.reason}`);
  }
  const weightMap = (json as { weight_map?: unknown })?.weight_map;
  if (typeof weightMap !== "object" || weightMap === null || Array.isArray(weightMap)) {
    throw new CorruptSafetensorsError(path, "index has no weight_map object");
  }
  const out = new Map<string, string>();
  for (const [name, file] of Object.entries(weightMap)) {
    if (typeof file !== "string" || file.includes("/") || file.includes("\\")) {
      throw new CorruptSafetensorsError(
        path,
        `weight_map.${name} must be a shard file name in the same directory, got ${
          JSON.stringify(file)
        }`,
      );
    }
    out.set(name, file);
  }
  return out;
}
