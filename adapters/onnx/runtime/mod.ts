/**
 * Runtimes for ONNX graphs: one interface (Runtime, Session, DeviceTensor), backends cpu
 * (onnxruntime-node), wasm and webgpu (onnxruntime-web), `auto`, and device-resident state.
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
export { keepFreedTensorMemory } from "./glibc-malloc.ts";
