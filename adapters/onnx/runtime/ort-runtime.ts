/**
 * The Runtime implementation shared by every backend: onnxruntime-node and onnxruntime-web expose
 * the same onnxruntime-common API, so only session options and device upload differ per backend.
 */
import type * as OrtWeb from "onnxruntime-web/webgpu";
import {
  elementCount,
  type HostData,
  type HostDType,
  type HostTensor,
  hostTensor,
} from "./host-tensor.ts";
import { captureProfile, readProfileFile, type SessionProfile } from "./ort-profile.ts";
import {
  type DeviceTensor,
  type ExternalData,
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
  /** What a session loaded with `fixedShape` adds to them. */
  readonly fixedShapeSessionOptions?: OrtSessionOptions;
  /** Where outputs asked to stay on the device live. */
  readonly deviceLocation: "cpu" | "gpu-buffer";
  /**
   * Makes an ORT tensor that lives on the device from host data; a promise where the upload is
   * itself a run (native WebGPU), which the first run or read that uses the tensor awaits.
   */
  readonly upload: (tensor: HostTensor) => OrtTensor | Promise<OrtTensor>;
  /**
   * Copies one device tensor to the host; default `getData()`, which onnxruntime-node's WebGPU
   * tensors do not support (it aborts the process).
   */
  readonly read?: (tensor: OrtTensor) => Promise<HostData>;
  /**
   * Copies several device tensors to the host at once. When given, every output is placed on the
   * device and a run reads its host outputs through this in one go.
   */
  readonly download?: (tensors: readonly OrtTensor[]) => Promise<readonly HostData[]>;
  /**
   * Sessions record onnxruntime's profile (`enableProfiling`), which the web backends print
   * (`printed`, see captureProfile) and onnxruntime-node writes to a file (`file`).
   */
  readonly profile?: "printed" | "file";
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

/**
 * Wraps an ORT tensor (or one still being uploaded) that the caller owns until dispose();
 * `unwrap` gives it to a run.
 */
function deviceTensor(
  tensor: OrtTensor | Promise<OrtTensor>,
  shape: { readonly dtype: HostDType; readonly dims: readonly number[] },
  location: "cpu" | "gpu-buffer",
  readDevice: ((tensor: OrtTensor) => Promise<HostData>) | undefined,
  context: string,
): { readonly device: DeviceTensor; readonly unwrap: () => Promise<OrtTensor> } {
  const { dtype } = shape;
  const dims = Object.freeze([...shape.dims]);
  const ready = Promise.resolve(tensor);
  // A failed upload surfaces at the first use, not as an unhandled rejection before it.
  ready.catch(() => undefined);
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
      const t = await ready;
      const data = location === "cpu"
        ? t.data
        : readDevice
        ? await readDevice(t)
        : await t.getData();
      // A copy: cpu tensors share memory with the session's output, which the caller may dispose.
      return toHost(dtype, dims, (data as Float32Array).slice());
    },
    dispose: () => {
      check("disposed");
      live = false;
      // At once where the tensor exists: its session may be released right after.
      if (tensor instanceof Promise) ready.then((t) => t.dispose(), () => undefined);
      else tensor.dispose();
    },
  });
  return { device, unwrap: () => (check("fed"), ready) };
}

/**
 * How a session finds a model's external data: onnxruntime-web takes the bytes as a session
 * option; onnxruntime-node, loading a model from memory, reads the file from a folder named in
 * the session's config, here a temporary one removed once the session exists (it has read or
 * mapped the file by then).
 */
async function externalDataOptions(
  spec: OrtBackendSpec,
  external: ExternalData,
): Promise<{ readonly sessionOptions: OrtSessionOptions; readonly remove: () => void }> {
  if (spec.info.onnxruntime.package !== "onnxruntime-node") {
    return {
      sessionOptions: { externalData: [{ path: external.location, data: external.data }] },
      remove: () => undefined,
    };
  }
  const folder = await Deno.makeTempDir({ prefix: "polyrl-external-data-" });
  await Deno.writeFile(`${folder}/${external.location}`, external.data);
  const extra = spec.sessionOptions.extra as { session?: Record<string, string> } | undefined;
  return {
    sessionOptions: {
      extra: {
        ...extra,
        session: { ...extra?.session, model_external_initializers_file_folder_path: folder },
      },
    },
    remove: () => Deno.removeSync(folder, { recursive: true }),
  };
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
 * ```ts
 * import type { HostTensor } from "./host-tensor.ts";
 * import { nodeTensor } from "./node-tensor.ts";
 * import { type OrtModule, ortRuntime } from "./ort-runtime.ts";
 * import type { RuntimeInfo } from "./runtime.ts";
 *
 * declare const ort: OrtModule; // onnxruntime-node
 * declare const info: RuntimeInfo; // backend, threads, adapter
 * const sessionOptions = { executionProviders: ["cpu"] };
 * const upload = (tensor: HostTensor) => nodeTensor(ort, tensor);
 * const close = () => Promise.resolve();
 * const runtime = ortRuntime({ ort, info, sessionOptions, deviceLocation: "cpu", upload, close });
 * ```
 */
export function ortRuntime(spec: OrtBackendSpec): Runtime {
  const sessions = new Set<Session>();
  // Device tensors this runtime made; a tensor of another runtime lives on another device.
  const owned = new WeakMap<DeviceTensor, () => Promise<OrtTensor>>();
  const wrap = (
    tensor: OrtTensor | Promise<OrtTensor>,
    shape: { readonly dtype: HostDType; readonly dims: readonly number[] },
    context: string,
  ): DeviceTensor => {
    const { device, unwrap } = deviceTensor(
      tensor,
      shape,
      spec.deviceLocation,
      spec.read,
      context,
    );
    owned.set(device, unwrap);
    return device;
  };
  // ORT-web's WebGPU EP refuses to create two sessions at once, so creation is serialized.
  let creating: Promise<unknown> = Promise.resolve();
  // Profiling: each live session's end, and the profiles of sessions already ended.
  let profiling = spec.profile !== undefined;
  const profilers = new Map<Session, () => void>();
  const profiles: SessionProfile[] = [];
  // onnxruntime-node writes each session's profile to <prefix>_<date>.json.
  const profileDir = spec.profile === "file"
    ? Deno.makeTempDirSync({ prefix: "polyrl-ort-profile-" })
    : null;
  let profiledSessions = 0;

  async function load(model: Uint8Array, options: SessionOptions = {}): Promise<Session> {
    const keep = new Set(options.keepOnDevice ?? []);
    const name = options.name ?? "model";
    const profiled = profiling;
    const profilePrefix = profiled && profileDir ? `${profileDir}/${profiledSessions++}` : null;
    let ortSession: OrtWeb.InferenceSession;
    const placement: Record<string, "cpu" | "gpu-buffer"> = {};
    try {
      // Outputs not named here keep ORT's default placement, the host, unless the backend
      // downloads host outputs itself (then all stay on the device until the run reads them).
      for (const name of keep) placement[name] = spec.deviceLocation;
      const external = options.externalData
        ? await externalDataOptions(spec, options.externalData)
        : { sessionOptions: {}, remove: () => undefined };
      const created = creating.then(() =>
        spec.ort.InferenceSession.create(model, {
          ...spec.sessionOptions,
          ...(options.fixedShape ? spec.fixedShapeSessionOptions : {}),
          ...external.sessionOptions,
          ...(spec.download
            ? { preferredOutputLocation: spec.deviceLocation }
            : spec.deviceLocation === "gpu-buffer" && keep.size > 0
            ? { preferredOutputLocation: placement }
            : {}),
          ...(profiled ? { enableProfiling: true } : {}),
          ...(profilePrefix ? { profileFilePrefix: profilePrefix } : {}),
        })
      );
      creating = created.catch(() => undefined);
      try {
        ortSession = await created;
      } finally {
        external.remove();
      }
    } catch (error) {
      throw new RuntimeError(
        `${spec.info.backend} runtime could not load the model${
          options.name ? ` ${options.name}` : ""
        } (${model.byteLength} bytes): ` +
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
          ortFeeds[name] = await unwrap();
        }
        if (fed !== inputNames.length) throw feedMismatch(inputNames, feeds);
        const outputs = await ortSession.run(ortFeeds);
        const host: Record<string, HostTensor> = {};
        const device: Record<string, DeviceTensor> = {};
        const onDevice: string[] = [];
        try {
          for (const name of outputNames) {
            const value = outputs[name] as OrtTensor;
            const context = `output ${name}`;
            if (keep.has(name)) continue;
            const dtype = asHostDType(value.type, context);
            // Empty outputs come back on the host whatever the placement.
            if (value.location === "gpu-buffer") onDevice.push(name);
            else host[name] = toHost(dtype, value.dims, value.data);
          }
          if (onDevice.length > 0) {
            const values = onDevice.map((name) => outputs[name] as OrtTensor);
            const data = await spec.download!(values);
            onDevice.forEach((name, i) => {
              host[name] = toHost(values[i].type as HostDType, values[i].dims, data[i]);
            });
          }
        } catch (error) {
          for (const name of outputNames) (outputs[name] as OrtTensor).dispose();
          throw error;
        }
        for (const name of onDevice) (outputs[name] as OrtTensor).dispose();
        for (const name of keep) {
          const value = outputs[name] as OrtTensor;
          const context = `output ${name}`;
          device[name] = wrap(
            value,
            { dtype: asHostDType(value.type, context), dims: value.dims },
            context,
          );
        }
        return { host: Object.freeze(host), device: Object.freeze(device) };
      },
      release: async () => {
        sessions.delete(session);
        profilers.get(session)?.();
        await ortSession.release();
      },
    });
    sessions.add(session);
    if (profiled) {
      profilers.set(session, () => {
        profilers.delete(session);
        const end = () => ortSession.endProfiling();
        const events = profilePrefix
          ? (end(), readProfileFile(profilePrefix))
          : captureProfile(end);
        profiles.push({ session: name, events });
      });
    }
    return session;
  }

  return Object.freeze({
    info: spec.info,
    load,
    upload: (tensor: HostTensor) => {
      if (elementCount(tensor.dims) === 0) {
        throw new RuntimeError("upload of an empty tensor: feed it as a host tensor instead");
      }
      return wrap(spec.upload(tensor), tensor, `uploaded ${tensor.dtype} [${tensor.dims}]`);
    },
    endProfiling: () => {
      if (!spec.profile) {
        throw new RuntimeError(
          `the ${spec.info.backend} runtime was not opened with profile: true` +
            (spec.info.backend === "cpu" ? " (and the cpu backend does not profile)" : ""),
        );
      }
      profiling = false;
      for (const end of [...profilers.values()]) end();
      return profiles.splice(0);
    },
    close: async () => {
      for (const session of [...sessions]) await session.release();
      await spec.close();
      if (profileDir) Deno.removeSync(profileDir, { recursive: true });
    },
  });
}
