/** Moving tensor data between the host and WebGPU storage buffers that ORT can feed. */
import { elementCount, type HostTensor } from "./host-tensor.ts";

const bytesPer = { float32: 4, float64: 8, int32: 4, float16: 2 } as const;

// WebGPU spec flag values; the type libraries this project checks against do not declare the
// GPUBufferUsage / GPUMapMode globals although Deno defines them at run time.
const usage = { mapRead: 0x1, copySrc: 0x4, copyDst: 0x8, storage: 0x80 } as const;
const mapModeRead = 0x1;

/** Bytes a tensor occupies, rounded up to WebGPU's 4-byte copy granularity (at least 16). */
export function paddedByteLength(tensor: Pick<HostTensor, "dtype" | "dims">): number {
  const bytes = elementCount(tensor.dims) * bytesPer[tensor.dtype];
  return Math.max(16, Math.ceil(bytes / 16) * 16);
}

/**
 * Creates a storage buffer holding the tensor's values.
 *
 * @example
 * const buffer = writeGpuBuffer(device, hostTensor("float32", [2], [1, 2]));
 */
export function writeGpuBuffer(device: GPUDevice, tensor: HostTensor): GPUBuffer {
  const size = paddedByteLength(tensor);
  const buffer = device.createBuffer({
    size,
    usage: usage.storage | usage.copySrc | usage.copyDst,
  });
  const bytes = new Uint8Array(size);
  bytes.set(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
  device.queue.writeBuffer(buffer, 0, bytes);
  return buffer;
}

/**
 * Copies the first `byteLength` bytes of a storage buffer back to the host.
 *
 * @example
 * const bytes = await readGpuBuffer(device, buffer, 8);
 */
export async function readGpuBuffer(
  device: GPUDevice,
  buffer: GPUBuffer,
  byteLength: number,
): Promise<ArrayBuffer> {
  const size = Math.min(buffer.size, Math.max(16, Math.ceil(byteLength / 16) * 16));
  const staging = device.createBuffer({
    size,
    usage: usage.mapRead | usage.copyDst,
  });
  const encoder = device.createCommandEncoder();
  encoder.copyBufferToBuffer(buffer, 0, staging, 0, size);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(mapModeRead);
  const copy = staging.getMappedRange(0, size).slice(0, byteLength);
  staging.unmap();
  staging.destroy();
  return copy;
}
