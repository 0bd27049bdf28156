/**
 * Mesa 25's software Vulkan driver (lavapipe) for onnxruntime-node's native WebGPU EP on a
 * machine without a GPU. Dawn, the EP's WebGPU implementation, refuses Debian 12's Mesa 22.3
 * lavapipe but runs on Mesa 25.0.7 from bookworm-backports. Installing that system-wide would
 * change what Deno's own WebGPU (the `webgpu-web` backend and its tests) sees, so
 * `.ci/software-vulkan.sh DIR` unpacks it into a folder instead, and only the processes that run
 * the native provider start with the environment below. It must be set at launch: the dynamic
 * loader reads LD_LIBRARY_PATH once, when the process starts.
 */

/** The variable that names the folder `.ci/software-vulkan.sh` filled (CI sets it). */
export const softwareVulkanVariable = "POLYRL_SOFTWARE_VULKAN";

/** Where the libraries lie inside the folder (Debian's multiarch layout, amd64). */
const libraryDir = "usr/lib/x86_64-linux-gnu";

/**
 * The environment a process needs to run the native WebGPU EP on the unpacked Mesa 25 of `dir`
 * (default: the folder $POLYRL_SOFTWARE_VULKAN names), or null when no folder is configured.
 * Throws when the folder is configured but does not hold what the script writes.
 *
 * @example
 * ```ts
 * import { softwareVulkanEnv } from "./software-vulkan.ts";
 *
 * const env = softwareVulkanEnv();
 * declare const args: string[]; // runs a script that opens the webgpu backend
 * if (env) await new Deno.Command(Deno.execPath(), { args, env }).output();
 * ```
 */
export function softwareVulkanEnv(
  dir: string | undefined = Deno.env.get(softwareVulkanVariable),
): Record<string, string> | null {
  if (!dir) return null;
  const icd = `${dir}/lvp_icd.json`;
  const libraries = `${dir}/${libraryDir}`;
  for (const path of [icd, `${libraries}/libvulkan_lvp.so`]) {
    try {
      Deno.statSync(path);
    } catch {
      throw new Error(
        `${softwareVulkanVariable}=${dir} but ${path} is missing; fill the folder with ` +
          `.ci/software-vulkan.sh ${dir}`,
      );
    }
  }
  const inherited = Deno.env.get("LD_LIBRARY_PATH");
  return {
    VK_ICD_FILENAMES: icd,
    LD_LIBRARY_PATH: inherited ? `${libraries}:${inherited}` : libraries,
  };
}

/** How to give the native WebGPU EP an adapter, for the error that says it found none. */
export function softwareVulkanAdvice(): string {
  const dir = Deno.env.get(softwareVulkanVariable) ?? "DIR";
  return "on a machine with a GPU, install its Vulkan driver and the Vulkan loader (libvulkan1); " +
    "on one without, unpack Mesa 25's software driver with `.ci/software-vulkan.sh " + dir +
    "` and start the process with VK_ICD_FILENAMES=" + dir + "/lvp_icd.json and " +
    "LD_LIBRARY_PATH=" + dir + "/" + libraryDir + " (Dawn refuses Debian 12's Mesa 22 lavapipe); " +
    `now VK_ICD_FILENAMES=${Deno.env.get("VK_ICD_FILENAMES") ?? "(unset)"}, ` +
    `LD_LIBRARY_PATH=${Deno.env.get("LD_LIBRARY_PATH") ?? "(unset)"}`;
}
