/**
 * Writes safetensors files: 8-byte little-endian header length, JSON header padded with spaces to
 * an 8-byte boundary (so tensor data is aligned, as the reference writer does), then tensor bytes
 * in name order with no gaps. `__metadata__.format = "pt"` is set because transformers refuses
 * files without a known format tag.
 */
import { assertLittleEndianHost, encodeFloats, type FloatDtype } from "./dtype.ts";
import type { NamedTensor } from "./tensor.ts";

/** Options for `encodeSafetensors` / `writeSafetensors`. */
export interface SafetensorsWriteOptions {
  /** Storage dtype for every tensor; default: each tensor's own `dtype`. */
  readonly dtype?: FloatDtype;
  /** Extra `__metadata__` strings (format=pt is always present). */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Serializes tensors to safetensors bytes in memory. Duplicate names throw.
 * @example
 * ```ts
 * import { encodeSafetensors } from "./safetensors-writer.ts";
 * import { namedTensor } from "./tensor.ts";
 *
 * const bytes = encodeSafetensors([namedTensor("w", [2], new Float32Array([1, 2]))]);
 * ```
 */
export function encodeSafetensors(
  tensors: readonly NamedTensor[],
  options: SafetensorsWriteOptions = {},
): Uint8Array {
  const layout = planLayout(tensors, options);
  const out = new Uint8Array(layout.head.length + layout.dataBytes);
  out.set(layout.head, 0);
  let at = layout.head.length;
  for (const { tensor, dtype } of layout.parts) {
    const bytes = encodeFloats(tensor.data, dtype);
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

/**
 * Writes tensors to `path` as one safetensors file, encoding one tensor at a time so peak memory
 * stays near the largest tensor rather than the whole file.
 * @example
 * ```ts
 * import { writeSafetensors } from "./safetensors-writer.ts";
 * import type { NamedTensor } from "./tensor.ts";
 *
 * declare const tensors: readonly NamedTensor[];
 * await writeSafetensors("adapter_model.safetensors", tensors, { dtype: "F32" });
 * ```
 */
export async function writeSafetensors(
  path: string,
  tensors: readonly NamedTensor[],
  options: SafetensorsWriteOptions = {},
): Promise<void> {
  const layout = planLayout(tensors, options);
  using file = await Deno.open(path, { write: true, create: true, truncate: true });
  await writeAll(file, layout.head);
  for (const { tensor, dtype } of layout.parts) {
    await writeAll(file, encodeFloats(tensor.data, dtype));
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  for (let done = 0; done < bytes.length;) done += await file.write(bytes.subarray(done));
}

interface Layout {
  /** Length prefix plus padded JSON header. */
  readonly head: Uint8Array;
  readonly parts: readonly { tensor: NamedTensor; dtype: FloatDtype }[];
  readonly dataBytes: number;
}

function planLayout(tensors: readonly NamedTensor[], options: SafetensorsWriteOptions): Layout {
  assertLittleEndianHost();
  const sorted = [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const header: Record<string, unknown> = {
    __metadata__: { ...options.metadata, format: "pt" },
  };
  const parts: { tensor: NamedTensor; dtype: FloatDtype }[] = [];
  let offset = 0;
  for (const tensor of sorted) {
    if (Object.hasOwn(header, tensor.name)) {
      throw new RangeError(`duplicate tensor name ${tensor.name}`);
    }
    const dtype = options.dtype ?? tensor.dtype;
    const length = storedByteLength(tensor, dtype);
    header[tensor.name] = { dtype, shape: tensor.shape, data_offsets: [offset, offset + length] };
    parts.push({ tensor, dtype });
    offset += length;
  }
  const json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.length / 8) * 8;
  const head = new Uint8Array(8 + padded);
  new DataView(head.buffer).setBigUint64(0, BigInt(padded), true);
  head.set(json, 8);
  head.fill(0x20, 8 + json.length);
  return { head, parts, dataBytes: offset };
}

/** Bytes a tensor occupies when stored as `dtype` (for shard planning and index totals). */
export function storedByteLength(t: NamedTensor, dtype: FloatDtype): number {
  return t.data.length * (dtype === "F32" ? 4 : 2);
}
