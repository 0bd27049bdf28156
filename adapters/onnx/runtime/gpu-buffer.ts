/** Moving tensor data between the host and WebGPU storage buffers that ORT can feed. */
import { elementCount, type HostData, type HostDType, type HostTensor } from "./host-tensor.ts";

const bytesPer = { float32: 4, float64: 8, int32: 4, float16: 2 } as const;

/** Bytes of one element of a host element type. */
export function bytesPerElement(dtype: HostDType): number {
  return bytesPer[dtype];
}

/** The typed array that holds `dtype` over `bytes` (float16 as raw Uint16 bits). */
export function typedArray(dtype: HostDType, bytes: ArrayBuffer): HostData {
  return dtype === "float32"
    ? new Float32Array(bytes)
    : dtype === "float64"
    ? new Float64Array(bytes)
    : dtype === "int32"
    ? new Int32Array(bytes)
    : new Uint16Array(bytes);
}

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
 * ```ts
 * import { writeGpuBuffer } from "./gpu-buffer.ts";
 * import { hostTensor } from "./host-tensor.ts";
 *
 * declare const device: GPUDevice;
 * const buffer = writeGpuBuffer(device, hostTensor("float32", [2], [1, 2]));
 * ```
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

/** A byte range at the start of a GPU buffer. */
export interface GpuBufferRange {
  readonly buffer: GPUBuffer;
  readonly byteLength: number;
}

/**
 * Copies the first `byteLength` bytes of each buffer back to the host with one submit and one
 * map of one staging buffer. Each map costs a fixed wait here: Deno's GPUBuffer.mapAsync polls
 * the device and then sleeps 10 ms before it looks again (ext/webgpu/buffer.rs), measured at
 * 11 ms per map on lavapipe and on the H200 alike, so reading N outputs one map each costs
 * N x 11 ms whatever their size.
 *
 * @example
 * ```ts
 * import { readGpuBuffers } from "./gpu-buffer.ts";
 *
 * declare const device: GPUDevice;
 * declare const x: GPUBuffer, y: GPUBuffer;
 * const [a, b] = await readGpuBuffers(device, [
 *   { buffer: x, byteLength: 8 },
 *   { buffer: y, byteLength: 4 },
 * ]);
 * ```
 */
export async function readGpuBuffers(
  device: GPUDevice,
  ranges: readonly GpuBufferRange[],
): Promise<ArrayBuffer[]> {
  for (const r of ranges) {
    if (r.byteLength > r.buffer.size) {
      throw new RangeError(`read of ${r.byteLength} bytes from a ${r.buffer.size}-byte GPU buffer`);
    }
  }
  // Copies move whole 4-byte words at 4-aligned offsets; a range never reads past its buffer.
  const sizes = ranges.map((r) => Math.min(r.buffer.size, Math.ceil(r.byteLength / 4) * 4));
  const offsets: number[] = [];
  let total = 0;
  for (const size of sizes) {
    offsets.push(total);
    total += size;
  }
  if (total === 0) return ranges.map(() => new ArrayBuffer(0));
  const staging = device.createBuffer({ size: total, usage: usage.mapRead | usage.copyDst });
  const encoder = device.createCommandEncoder();
  ranges.forEach((r, i) => {
    if (sizes[i] > 0) encoder.copyBufferToBuffer(r.buffer, 0, staging, offsets[i], sizes[i]);
  });
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(mapModeRead);
  const mapped = staging.getMappedRange(0, total);
  const copies = ranges.map((r, i) => mapped.slice(offsets[i], offsets[i] + r.byteLength));
  staging.unmap();
  staging.destroy();
  return copies;
}
