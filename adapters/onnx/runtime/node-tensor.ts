/** Host tensors as onnxruntime-node takes them (the cpu and native webgpu backends). */
import type { HostTensor } from "./host-tensor.ts";
import type { OrtModule, OrtTensor } from "./ort-runtime.ts";

/**
 * An onnxruntime-node tensor holding a copy of the host tensor's data, so that later writes to
 * the caller's array cannot change what was handed over.
 *
 * @example
 * ```ts
 * import { hostTensor } from "./host-tensor.ts";
 * import { nodeTensor } from "./node-tensor.ts";
 * import type { OrtModule } from "./ort-runtime.ts";
 *
 * declare const ort: OrtModule; // onnxruntime-node
 * const t = nodeTensor(ort, hostTensor("float16", [1], new Uint16Array([0x3c00])));
 * ```
 */
export function nodeTensor(ort: OrtModule, tensor: HostTensor): OrtTensor {
  const copy = new ort.Tensor(tensor.dtype, tensor.data.slice(), [...tensor.dims]);
  // onnxruntime-common wraps float16 bits in a Float16Array where the JS engine has one, and
  // Deno's Node-API reports such an array as empty ("not enough space: expected N, got 0"):
  // hand the native binding the raw Uint16Array bits it reads for float16.
  if (tensor.dtype === "float16") {
    (copy as unknown as { cpuData: Uint16Array }).cpuData = new Uint16Array(
      (copy.data as unknown as ArrayBufferView).buffer,
    );
  }
  return copy;
}
