/**
 * Host-side tensors: the plain data the runtimes take in and hand back. Independent of the graph
 * IR so that a runtime can run any ONNX model.
 */

/** Element types the runtimes exchange with the host (float64 only on the cpu backend). */
export type HostDType = "float32" | "float16" | "float64" | "int32";

/** Typed array that stores each element type (float16 as raw IEEE half bits). */
export type HostData<D extends HostDType = HostDType> = D extends "float32" ? Float32Array
  : D extends "float64" ? Float64Array
  : D extends "int32" ? Int32Array
  : Uint16Array;

/** A dense row-major tensor held in host memory. */
export interface HostTensor<D extends HostDType = HostDType> {
  readonly kind: "host-tensor";
  readonly dtype: D;
  readonly dims: readonly number[];
  readonly data: HostData<D>;
}

/** A tensor's shape and element type do not agree with its data. */
export class HostTensorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HostTensorError";
  }
}

const arrayTypes = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  float16: Uint16Array,
} as const;

/** Number of elements of a shape (1 for a scalar). */
export function elementCount(dims: readonly number[]): number {
  return dims.reduce((n, d) => n * d, 1);
}

/**
 * Builds a frozen host tensor, checking that the data length matches the dims.
 *
 * @example
 * ```ts
 * import { hostTensor } from "./host-tensor.ts";
 *
 * const x = hostTensor("float32", [2, 2], new Float32Array([1, 2, 3, 4]));
 * ```
 */
export function hostTensor<D extends HostDType>(
  dtype: D,
  dims: readonly number[],
  data: HostData<D> | readonly number[],
): HostTensor<D> {
  for (const d of dims) {
    if (!Number.isInteger(d) || d < 0) {
      throw new HostTensorError(`dims [${dims}] hold ${d}; each dim must be a whole number >= 0`);
    }
  }
  const ArrayType = arrayTypes[dtype];
  if (!ArrayType) {
    throw new HostTensorError(`dtype ${dtype} is not one of float32, float64, int32, float16`);
  }
  const typed = (ArrayBuffer.isView(data) ? data : ArrayType.from(data)) as HostData<D>;
  if (!(typed instanceof ArrayType)) {
    throw new HostTensorError(
      `${dtype} data must be a ${ArrayType.name}, got ${typed.constructor.name}`,
    );
  }
  if (typed.length !== elementCount(dims)) {
    throw new HostTensorError(
      `data holds ${typed.length} elements but dims [${dims}] need ${elementCount(dims)}`,
    );
  }
  return Object.freeze({ kind: "host-tensor", dtype, dims: Object.freeze([...dims]), data: typed });
}

/**
 * A float32 scalar (dims []), the shape hyperparameter inputs take.
 *
 * @example
 * ```ts
 * import { scalar } from "./host-tensor.ts";
 *
 * const lr = scalar(1e-3);
 * ```
 */
export function scalar(value: number): HostTensor<"float32"> {
  return hostTensor("float32", [], new Float32Array([value]));
}
