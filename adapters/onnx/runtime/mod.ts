/**
 * Runtimes for ONNX graphs: one interface (Runtime, Session, DeviceTensor), backends cpu and
 * webgpu (onnxruntime-node's CPU and native WebGPU EPs), wasm and webgpu-web (onnxruntime-web),
 * `auto`, and device-resident state.
 */
export * from "./host-tensor.ts";
export * from "./runtime.ts";
export { openRuntime, type OpenRuntimeOptions } from "./open-runtime.ts";
export { type AdapterProbe, probeWebGpuAdapter } from "./webgpu-adapter.ts";
export {
  type OpTime,
  type ProfileEvent,
  type RunProfile,
  runProfile,
  type SessionProfile,
} from "./ort-profile.ts";
export { createDeviceState, type DeviceState, type StateBinding } from "./device-state.ts";
export { softwareVulkanEnv, softwareVulkanVariable } from "./software-vulkan.ts";
