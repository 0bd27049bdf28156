/**
 * The one runtime interface that every backend implements (cpu, wasm, webgpu, webgpu-web): load an ONNX model,
 * run it with host or device-resident feeds, keep chosen outputs on the device.
 */
import type { HostDType, HostTensor } from "./host-tensor.ts";
import type { SessionProfile } from "./ort-profile.ts";

/**
 * A concrete backend: onnxruntime-node's CPU EP (`cpu`) and native WebGPU EP (`webgpu`, Dawn),
 * onnxruntime-web's WASM (`wasm`) and WebGPU through Deno's bindings (`webgpu-web`, the path a
 * browser takes).
 */
export type BackendName = "cpu" | "wasm" | "webgpu" | "webgpu-web";

/** What a caller may ask for: a backend, or `auto` (hardware WebGPU adapter, else cpu). */
export type BackendChoice = BackendName | "auto";

/** The WebGPU adapter a runtime computes on, as the adapter reports itself. */
export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
  /** True for software adapters such as Mesa lavapipe/llvmpipe. */
  readonly isFallbackAdapter: boolean;
}

/** Everything about a runtime that a replay needs to know; recorded in the event log. */
export interface RuntimeInfo {
  readonly backend: BackendName;
  readonly requested: BackendChoice;
  /** Why `auto` chose this backend; null when a backend was asked for by name. */
  readonly autoReason: string | null;
  readonly onnxruntime: { readonly package: string; readonly version: string };
  /** The ORT execution provider name the sessions are created with. */
  readonly executionProvider: string;
  /** Intra-op threads (1 for wasm; GPU dispatch is single-threaded host-side). */
  readonly threads: number;
  readonly deterministicCompute: boolean;
  readonly adapter: AdapterInfo | null;
  readonly deno: string;
}

/**
 * A tensor living where the backend computes (GPU buffer on webgpu, ORT-owned memory otherwise).
 * Feeding it to a later run avoids a host round trip; the owner must dispose it exactly once.
 */
export interface DeviceTensor {
  readonly kind: "device-tensor";
  readonly dtype: HostDType;
  readonly dims: readonly number[];
  readonly location: "cpu" | "gpu-buffer";
  /** Copies the values to the host. */
  read(): Promise<HostTensor>;
  /** Frees device memory; reading or feeding it afterwards is an error. */
  dispose(): void;
}

/** A value a run accepts for an input. */
export type Feed = HostTensor | DeviceTensor;

/** How a session is created. */
export interface SessionOptions {
  /** Output names returned as DeviceTensors (left on the GPU on webgpu); others come back to host. */
  readonly keepOnDevice?: readonly string[];
  /** Names the model in errors and profiles (e.g. `decode`); default `model`. */
  readonly name?: string;
  /**
   * The session runs at one input shape again and again (a supervised train step): the cpu
   * backend keeps its memory in onnxruntime's arena from run to run instead of freeing each run's
   * plan, which a session of varying shapes must not do (the arena keeps the peak of every shape
   * it saw). Other backends ignore it.
   */
  readonly fixedShape?: boolean;
  /**
   * The bytes of the model's external initializers (ONNX external data; `location` as the model
   * names the file), for a model whose constants do not fit protobuf's 2 GB (see
   * onnx-writer.ts's toOnnxModelWithExternalData).
   */
  readonly externalData?: ExternalData;
}

/** A model's external data file: its name in the model and its contents. */
export interface ExternalData {
  readonly location: string;
  readonly data: Uint8Array;
}

/** The outputs of one run, split by where they live. */
export interface RunResult {
  readonly host: Readonly<Record<string, HostTensor>>;
  readonly device: Readonly<Record<string, DeviceTensor>>;
}

/** A loaded model. */
export interface Session {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  /** Runs the model once; every graph input must be fed. */
  run(feeds: Readonly<Record<string, Feed>>): Promise<RunResult>;
  release(): Promise<void>;
}

/** One backend, opened once per process and shared by all sessions on it. */
export interface Runtime {
  readonly info: RuntimeInfo;
  /** Loads a serialized ONNX ModelProto. */
  load(model: Uint8Array, options?: SessionOptions): Promise<Session>;
  /**
   * Places a host tensor on the device once, so that several runs and sessions (a frozen base
   * shared by several adapters) feed the same memory without copying it per run or per session.
   */
  upload(tensor: HostTensor): DeviceTensor;
  /**
   * On a runtime opened with `profile: true` (not cpu): stops onnxruntime's profiler and
   * returns the events of every session loaded since, released ones included (see
   * ort-profile.ts). Sessions loaded afterwards are not profiled.
   */
  endProfiling(): readonly SessionProfile[];
  close(): Promise<void>;
}

/** A runtime could not be opened or a run was fed wrongly; the message names what and how to fix. */
export class RuntimeError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RuntimeError";
  }
}
