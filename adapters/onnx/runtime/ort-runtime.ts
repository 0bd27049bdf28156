/**
 * The Runtime implementation shared by every backend: onnxruntime-node and onnxruntime-web expose
 * the same onnxruntime-common API, so only session options and device upload differ per backend.
 */
import type * as OrtWeb from "onnxruntime-web/webgpu";
import { elementCount, type HostDType, type HostTensor, hostTensor } from "./host-tensor.ts";
import {
  type DeviceTensor,
  type Feed,
  type RunResult,
  type Runtime,
  RuntimeError,
  type RuntimeInfo,
  type Session,
  type SessionOptions,
} from "./runtime.ts";

/** The part of an onnxruntime package this module uses (identical in -node and -web). */
export type OrtModule = Pick<typeof OrtWeb, "InferenceSession" | "Tensor">;
/** A tensor of either onnxruntime package. */
export type OrtTensor = OrtWeb.Tensor;
type OrtSessionOptions = OrtWeb.InferenceSession.SessionOptions;

/** What one backend contributes to the shared implementation. */
export interface OrtBackendSpec {
  readonly ort: OrtModule;
  readonly info: RuntimeInfo;
  /** Session options without output placement (EP, threads, determinism). */
  readonly sessionOptions: OrtSessionOptions;
  /** Where outputs asked to stay on the device live. */
  readonly deviceLocation: "cpu" | "gpu-buffer";
  /** Makes an ORT tensor that lives on the device from host data. */
  readonly upload: (tensor: HostTensor) => OrtTensor;
  /** Frees backend resources after all sessions are released. */
  readonly close: () => Promise<void>;
}

const hostDTypes: ReadonlySet<string> = new Set(["float32", "float16", "float64", "int32"]);

function asHostDType(type: string, context: string): HostDType {
  if (!hostDTypes.has(type)) {
    throw new RuntimeError(
      `${context} has element type ${type}; runtimes exchange only float32, float16, float64 and int32 ` +
        `(cast it in the graph)`,
    );
  }
  return type as HostDType;
}

/** Copies an ORT tensor's host-side data into a HostTensor (float16 kept as raw bits). */
function toHost(dtype: HostDType, dims: readonly number[], data: unknown): HostTensor {
  const view = data as ArrayBufferView;
  if (dtype === "float16" && !(view instanceof Uint16Array)) {
    return hostTensor(
      dtype,
      dims,
      new Uint16Array(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength)),
    );
  }
  return hostTensor(dtype, dims, data as Float32Array);
}

function toOrt(ort: OrtModule, tensor: HostTensor): OrtTensor {
  return new ort.Tensor(tensor.dtype, tensor.data, [...tensor.dims]);
}

/** Wraps an ORT tensor that the caller owns until dispose(); `unwrap` gives it to a run. */
function deviceTensor(
  tensor: OrtTensor,
  location: "cpu" | "gpu-buffer",
  context: string,
): { readonly device: DeviceTensor; readonly unwrap: () => OrtTensor } {
  const dtype = asHostDType(tensor.type, context);
  const dims = Object.freeze([...tensor.dims]);
  let live = true;
  const check = (what: string) => {
    if (!live) throw new RuntimeError(`${context} was disposed; it cannot be ${what} any more`);
  };
  const device: DeviceTensor = Object.freeze({
    kind: "device-tensor" as const,
    dtype,
    dims,
    location,
    read: async () => {
      check("read");
      const data = location === "cpu" ? tensor.data : await tensor.getData();
      // A copy: cpu tensors share memory with the session's output, which the caller may dispose.
      return toHost(dtype, dims, (data as Float32Array).slice());
    },
    dispose: () => {
      check("disposed");
      live = false;
      tensor.dispose();
    },
  });
  return { device, unwrap: () => (check("fed"), tensor) };
}

/** The error for feeds that are not exactly the model's inputs, naming what is missing and extra. */
function feedMismatch(
  inputNames: readonly string[],
  feeds: Readonly<Record<string, Feed>>,
): RuntimeError {
  const missing = inputNames.filter((name) => !(name in feeds));
  const unknown = Object.keys(feeds).filter((name) => !inputNames.includes(name));
  return new RuntimeError(
    `feeds do not match the model inputs: missing [${missing.join(", ")}], ` +
      `unknown [${unknown.join(", ")}]`,
  );
}

/**
 * Builds a Runtime from a backend spec.
 *
 * @example
 * const runtime = ortRuntime({ ort, info, sessionOptions, deviceLocation: "cpu", upload, close });
 */
export function ortRuntime(spec: OrtBackendSpec): Runtime {
  const sessions = new Set<Session>();
  // Device tensors this runtime made; a tensor of another runtime lives on another device.
  const owned = new WeakMap<DeviceTensor, () => OrtTensor>();
  const wrap = (tensor: OrtTensor, context: string): DeviceTensor => {
    const { device, unwrap } = deviceTensor(tensor, spec.deviceLocation, context);
    owned.set(device, unwrap);
    return device;
  };
  // ORT-web's WebGPU EP refuses to create two sessions at once, so creation is serialized.
  let creating: Promise<unknown> = Promise.resolve();

  async function load(model: Uint8Array, options: SessionOptions = {}): Promise<Session> {
    const keep = new Set(options.keepOnDevice ?? []);
    let ortSession: OrtWeb.InferenceSession;
    const placement: Record<string, "cpu" | "gpu-buffer"> = {};
    try {
      // Outputs not named here keep ORT's default placement, the host.
      for (const name of keep) placement[name] = spec.deviceLocation;
      const created = creating.then(() =>
        spec.ort.InferenceSession.create(model, {
          ...spec.sessionOptions,
          ...(spec.deviceLocation === "gpu-buffer" && keep.size > 0
            ? { preferredOutputLocation: placement }
            : {}),
        })
      );
      creating = created.catch(() => undefined);
      ortSession = await created;
    } catch (error) {
      throw new RuntimeError(
        `${spec.info.backend} runtime could not load the model (${model.byteLength} bytes): ` +
          `${error instanceof Error ? error.message : error}`,
        { cause: error },
      );
    }
    const inputNames = Object.freeze([...ortSession.inputNames]);
    const outputNames = Object.freeze([...ortSession.outputNames]);
    for (const name of keep) {
      if (!outputNames.includes(name)) {
        await ortSession.release();
        throw new RuntimeError(
          `keepOnDevice names ${name}, which is not an output; outputs: ${outputNames.join(", ")}`,
        );
      }
    }

    const inputSet: ReadonlySet<string> = new Set(inputNames);
    const session: Session = Object.freeze({
      inputNames,
      outputNames,
      run: async (feeds: Readonly<Record<string, Feed>>): Promise<RunResult> => {
        // One pass over the feeds (a decode run takes ~90 of them, once per generated token).
        const ortFeeds: Record<string, OrtTensor> = {};
        let fed = 0;
        for (const name of Object.keys(feeds)) {
          if (!inputSet.has(name)) throw feedMismatch(inputNames, feeds);
          fed++;
          const feed = feeds[name];
          if (feed.kind === "host-tensor") {
            ortFeeds[name] = toOrt(spec.ort, feed);
            continue;
          }
          const unwrap = owned.get(feed);
          if (!unwrap) {
            throw new RuntimeError(
              `feed ${name} is a DeviceTensor of another runtime; read() it to the host first`,
            );
          }
          ortFeeds[name] = unwrap();
        }
        if (fed !== inputNames.length) throw feedMismatch(inputNames, feeds);
        const outputs = await ortSession.run(ortFeeds);
        const host: Record<string, HostTensor> = {};
        const device: Record<string, DeviceTensor> = {};
        for (const name of outputNames) {
          const value = outputs[name] as OrtTensor;
          const context = `output ${name}`;
          if (keep.has(name)) device[name] = wrap(value, context);
          else {
            host[name] = toHost(asHostDType(value.type, context), value.dims, value.data);
          }
        }
        return { host: Object.freeze(host), device: Object.freeze(device) };
      },
      release: async () => {
        sessions.delete(session);
        await ortSession.release();
      },
    });
    sessions.add(session);
    return session;
  }

  return Object.freeze({
    info: spec.info,
    load,
    upload: (tensor: HostTensor) => {
      if (elementCount(tensor.dims) === 0) {
        throw new RuntimeError("upload of an empty tensor: feed it as a host tensor instead");
      }
      return wrap(spec.upload(tensor), `uploaded ${tensor.dtype} [${tensor.dims}]`);
    },
    close: async () => {
      for (const session of [...sessions]) await session.release();
      await spec.close();
    },
  });
}
