/**
 * Named tensors that live on the device between runs (parameters, optimizer moments, gradient
 * accumulators, step counters). A run feeds every state tensor its session takes as input and
 * replaces state with the outputs bound to it, so on webgpu the state never leaves the GPU.
 * Several sessions (a gradient-accumulation session and an optimizer session) share one store.
 */
import type { HostTensor } from "./host-tensor.ts";
import {
  type DeviceTensor,
  type Feed,
  type Runtime,
  RuntimeError,
  type Session,
} from "./runtime.ts";

/** After a run, output `output` becomes the state tensor `state`. */
export interface StateBinding {
  readonly state: string;
  readonly output: string;
}

/** A set of device-resident tensors owned by one training loop. */
export interface DeviceState {
  /** State names in insertion order. */
  names(): readonly string[];
  has(name: string): boolean;
  /** The current tensor of `name`; valid until the next run or write that replaces it. */
  get(name: string): DeviceTensor;
  /** Uploads host values as the new `name` (creating it), freeing the tensor it replaces. */
  write(name: string, value: HostTensor): void;
  /** Copies `name` to the host. */
  read(name: string): Promise<HostTensor>;
  /**
   * Runs `session` with `feeds` plus every state tensor named like one of its inputs, then moves
   * each bound output into state (freeing the replaced tensor) and returns the host outputs.
   * The session must have been loaded with the bound outputs in `keepOnDevice`.
   */
  run(
    session: Session,
    feeds: Readonly<Record<string, Feed>>,
    bindings: readonly StateBinding[],
  ): Promise<Readonly<Record<string, HostTensor>>>;
  /** Frees every state tensor. */
  release(): void;
}

/**
 * Creates an empty store on `runtime`.
 *
 * @example
 * ```ts
 * import { createDeviceState } from "./device-state.ts";
 * import type { HostTensor } from "./host-tensor.ts";
 * import type { Runtime, Session } from "./runtime.ts";
 *
 * declare const runtime: Runtime;
 * declare const session: Session; // loaded with keepOnDevice: ["w.next"]
 * declare const w0: HostTensor, x: HostTensor;
 * const state = createDeviceState(runtime);
 * state.write("w", w0);
 * const metrics = await state.run(session, { x }, [{ state: "w", output: "w.next" }]);
 * ```
 */
export function createDeviceState(runtime: Runtime): DeviceState {
  const tensors = new Map<string, DeviceTensor>();
  const get = (name: string): DeviceTensor => {
    const t = tensors.get(name);
    if (!t) {
      throw new RuntimeError(
        `no state named ${name}; state holds: ${[...tensors.keys()].join(", ")}`,
      );
    }
    return t;
  };
  const replace = (name: string, next: DeviceTensor) => {
    const old = tensors.get(name);
    tensors.set(name, next);
    old?.dispose();
  };
  return Object.freeze({
    names: () => [...tensors.keys()],
    has: (name: string) => tensors.has(name),
    get,
    write: (name: string, value: HostTensor) => replace(name, runtime.upload(value)),
    read: (name: string) => get(name).read(),
    run: async (
      session: Session,
      feeds: Readonly<Record<string, Feed>>,
      bindings: readonly StateBinding[],
    ) => {
      const all: Record<string, Feed> = { ...feeds };
      for (const name of session.inputNames) {
        const t = tensors.get(name);
        if (!t) continue;
        if (name in feeds) throw new RuntimeError(`feed ${name} is also state; write() it instead`);
        all[name] = t;
      }
      const result = await session.run(all);
      for (const b of bindings) {
        const t = result.device[b.output];
        if (!t) {
          throw new RuntimeError(
            `bound output ${b.output} was not kept on the device; load the session with ` +
              `keepOnDevice including it`,
          );
        }
        replace(b.state, t);
      }
      return result.host;
    },
    release: () => {
      for (const t of tensors.values()) t.dispose();
      tensors.clear();
    },
  });
}
