/**
 * Writes model weights the way `save_pretrained` lays them out: one `model.safetensors`, or, past
 * the shard size, `model-0000i-of-0000n.safetensors` files plus `model.safetensors.index.json`
 * (`metadata.total_size` and a `weight_map` from tensor name to shard file).
 */
import { join } from "node:path";
import type { FloatDtype } from "./dtype.ts";
import { INDEX_FILE, SINGLE_FILE } from "./checkpoint-reader.ts";
import { storedByteLength, writeSafetensors } from "./safetensors-writer.ts";
import type { NamedTensor } from "./tensor.ts";

/** transformers' default `max_shard_size` ("5GB"). */
export const DEFAULT_MAX_SHARD_BYTES = 5_000_000_000;

/** Options for `writeCheckpointTensors`. */
export interface CheckpointWriteOptions {
  /** Storage dtype for every tensor; default: each tensor's own dtype. */
  readonly dtype?: FloatDtype;
  /** A shard closes before it would exceed this; one tensor larger than it gets its own shard. */
  readonly maxShardBytes?: number;
}

/**
 * Writes `tensors` into `dir` (which must exist) and returns the weight files written.
 * @example
 * ```ts
 * import { writeCheckpointTensors } from "./checkpoint-writer.ts";
 * import type { NamedTensor } from "./tensor.ts";
 *
 * declare const dir: string;
 * declare const tensors: readonly NamedTensor[];
 * await writeCheckpointTensors(dir, tensors, { dtype: "BF16", maxShardBytes: 1 << 20 });
 * ```
 */
export async function writeCheckpointTensors(
  dir: string,
  tensors: readonly NamedTensor[],
  options: CheckpointWriteOptions = {},
): Promise<string[]> {
  const limit = options.maxShardBytes ?? DEFAULT_MAX_SHARD_BYTES;
  const sizeOf = (t: NamedTensor) => storedByteLength(t, options.dtype ?? t.dtype);
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const shards: NamedTensor[][] = [];
  let current: NamedTensor[] = [];
  let currentBytes = 0;
  for (const t of sorted) {
    if (current.length > 0 && currentBytes + sizeOf(t) > limit) {
      shards.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(t);
    currentBytes += sizeOf(t);
  }
  shards.push(current);
  const write = { dtype: options.dtype };
  if (shards.length === 1) {
    await writeSafetensors(join(dir, SINGLE_FILE), shards[0], write);
    return [SINGLE_FILE];
  }
  const pad = (i: number) => String(i).padStart(5, "0");
  const files = shards.map((_, i) => `model-${pad(i + 1)}-of-${pad(shards.length)}.safetensors`);
  const weightMap: Record<string, string> = {};
  for (const [i, shard] of shards.entries()) {
    await writeSafetensors(join(dir, files[i]), shard, write);
    for (const t of shard) weightMap[t.name] = files[i];
  }
  const totalSize = sorted.reduce((n, t) => n + sizeOf(t), 0);
  const index = { metadata: { total_size: totalSize }, weight_map: weightMap };
  await Deno.writeTextFile(join(dir, INDEX_FILE), JSON.stringify(index, null, 2) + "\n");
  return [...files, INDEX_FILE];
}
