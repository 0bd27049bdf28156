/**
 * Decodes safetensors bytes held in memory (a checkpoint blob read back from the blob store),
 * the inverse of `encodeSafetensors`.
 */
import {
  CorruptSafetensorsError,
  decodeFloats,
  isFloatDtype,
  type NamedTensor,
  namedTensor,
  parseSafetensorsHeader,
} from "../../../adapters/hf/mod.ts";

/**
 * The tensors of a safetensors byte string by name, widened to float32.
 *
 * @example
 * ```ts
 * import type { EventStore, RecordedEvent } from "../../../events/mod.ts";
 * import { decodeSafetensors } from "./safetensors-bytes.ts";
 *
 * declare const store: EventStore;
 * declare const event: RecordedEvent<"checkpoint.saved">; // a LoRA group's checkpoint
 * const tensors = decodeSafetensors(await store.blobs.get(event.data.blob), "checkpoint abc");
 * tensors.get("lm_head.lora_a")!.data; // Float32Array
 * ```
 */
export function decodeSafetensors(bytes: Uint8Array, label: string): Map<string, NamedTensor> {
  if (bytes.length < 8) {
    throw new CorruptSafetensorsError(label, `${bytes.length} bytes, fewer than the 8-byte prefix`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  if (8 + headerLength > bytes.length) {
    throw new CorruptSafetensorsError(label, `header of ${headerLength} bytes overruns the data`);
  }
  const header = parseSafetensorsHeader(label, bytes.subarray(8, 8 + headerLength), bytes.length);
  const out = new Map<string, NamedTensor>();
  for (const entry of header.entries.values()) {
    if (!isFloatDtype(entry.dtype)) {
      throw new CorruptSafetensorsError(label, `tensor ${entry.name} has non-float ${entry.dtype}`);
    }
    const data = decodeFloats(
      bytes.subarray(entry.start, entry.start + entry.byteLength),
      entry.dtype,
    );
    out.set(entry.name, namedTensor(entry.name, entry.shape, data));
  }
  return out;
}
