/** The runtime a server computes on: `--device` and `--threads` (intra-op threads on cpu). */
import { openRuntime, type Runtime } from "../../adapters/onnx/runtime/mod.ts";

/** Devices `--device` takes. */
export const SERVE_DEVICES = ["cpu", "wasm", "webgpu", "webgpu-web"] as const;
export type DeviceChoice = (typeof SERVE_DEVICES)[number];

/**
 * Opens the runtime of `device`, with `threads` intra-op threads on cpu.
 *
 * @example
 * ```ts
 * import { openServeRuntime } from "./runtime-choice.ts";
 *
 * const runtime = await openServeRuntime("cpu", 1);
 * await runtime.close();
 * ```
 */
export async function openServeRuntime(device: DeviceChoice, threads: number): Promise<Runtime> {
  return await openRuntime(device, { threads });
}
