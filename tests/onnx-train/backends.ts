/**
 * Which backends the ONNX tests run on. webgpu-web runs wherever Deno finds an adapter (Mesa lavapipe
 * in CI); only when none exists is it skipped, and the test name then carries the reason.
 */
import {
  type BackendName,
  openRuntime,
  probeWebGpuAdapter,
  type Runtime,
} from "../../adapters/onnx/runtime/mod.ts";

const probe = await probeWebGpuAdapter();

/** Why webgpu-web tests are skipped, or null when an adapter exists. */
export const webgpuSkipReason: string | null = probe.kind === "adapter" ? null : probe.reason;

/** Every backend, with the reason it is skipped here (null: it runs). */
export const backends: readonly { name: BackendName; skip: string | null }[] = [
  { name: "cpu", skip: null },
  { name: "wasm", skip: null },
  { name: "webgpu-web", skip: webgpuSkipReason },
];

/** A test name that states a skip reason when there is one. */
export function testName(base: string, skip: string | null): string {
  return skip ? `${base} (skipped: ${skip})` : base;
}

/**
 * Opens a runtime, runs `body`, and closes the runtime even when `body` throws.
 *
 * @example
 * ```ts
 * import type { HostTensor } from "../../adapters/onnx/runtime/mod.ts";
 * import { withRuntime } from "./backends.ts";
 *
 * declare const model: Uint8Array; // a serialized ONNX ModelProto
 * declare const feeds: Record<string, HostTensor>; // every input of the model
 * const outputs = await withRuntime("cpu", async (rt) => {
 *   const session = await rt.load(model);
 *   return (await session.run(feeds)).host;
 * });
 * ```
 */
export async function withRuntime<T>(
  backend: BackendName,
  body: (runtime: Runtime) => Promise<T>,
): Promise<T> {
  const runtime = await openRuntime(backend, { threads: 2 });
  try {
    return await body(runtime);
  } finally {
    await runtime.close();
  }
}
