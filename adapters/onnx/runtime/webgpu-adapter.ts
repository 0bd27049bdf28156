/**
 * Finding a WebGPU adapter in Deno. Deno exposes `navigator.gpu` (wgpu over Vulkan); on a machine
 * without a GPU, Mesa's lavapipe ICD (packages mesa-vulkan-drivers, libvulkan1) is picked up by the
 * Vulkan loader with no environment variables and shows up as a fallback (software) adapter.
 */
import type { AdapterInfo } from "./runtime.ts";

/** An adapter that was found, or the reason none was. */
export type AdapterProbe =
  | { readonly kind: "adapter"; readonly adapter: GPUAdapter; readonly info: AdapterInfo }
  | { readonly kind: "no-adapter"; readonly reason: string };

/**
 * Asks Deno for its preferred WebGPU adapter and describes it.
 *
 * @example
 * ```ts
 * import { probeWebGpuAdapter } from "./webgpu-adapter.ts";
 *
 * const probe = await probeWebGpuAdapter();
 * if (probe.kind === "adapter") console.log(probe.info.description);
 * ```
 */
export async function probeWebGpuAdapter(): Promise<AdapterProbe> {
  const gpu = (globalThis.navigator as Navigator | undefined)?.gpu;
  if (!gpu) {
    return {
      kind: "no-adapter",
      reason: "navigator.gpu is undefined: this Deno build exposes no WebGPU",
    };
  }
  // Mesa's Vulkan drivers print an error line per device when XDG_RUNTIME_DIR is unset (as in
  // CI and cron); a private empty one silences them and changes nothing else.
  if (!Deno.env.get("XDG_RUNTIME_DIR")) {
    const dir = Deno.makeTempDirSync({ prefix: "polyrl-xdg-" });
    Deno.chmodSync(dir, 0o700);
    Deno.env.set("XDG_RUNTIME_DIR", dir);
  }
  // Mesa's software adapter (lavapipe) runs a dispatch's workgroups on several threads, and ORT's
  // WebGPU kernels that accumulate atomically (ScatterElements add: the embedding gradient) then
  // sum in a thread-dependent order: 3 of 8 repeated train steps differed in the last bit here.
  // One thread makes it bit-reproducible. The variable means nothing to hardware drivers.
  if (!Deno.env.get("LP_NUM_THREADS")) Deno.env.set("LP_NUM_THREADS", "1");
  let adapter: GPUAdapter | null;
  try {
    adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
  } catch (error) {
    return { kind: "no-adapter", reason: `navigator.gpu.requestAdapter() threw: ${error}` };
  }
  if (!adapter) {
    return {
      kind: "no-adapter",
      reason: "navigator.gpu.requestAdapter() returned null: no Vulkan driver found; " +
        "install mesa-vulkan-drivers and libvulkan1 for the software adapter, or point " +
        "VK_ICD_FILENAMES at an ICD json",
    };
  }
  // Deno reports isFallbackAdapter on the info object (newer spec); older builds on the adapter.
  const raw = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const legacy = adapter as GPUAdapter & { isFallbackAdapter?: boolean };
  const info: AdapterInfo = Object.freeze({
    vendor: raw.vendor,
    architecture: raw.architecture,
    device: raw.device,
    description: raw.description,
    isFallbackAdapter: Boolean(raw.isFallbackAdapter ?? legacy.isFallbackAdapter),
  });
  return { kind: "adapter", adapter, info };
}
