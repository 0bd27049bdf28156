import type { FloatDtype } from "./dtype.ts";

/**
 * A checkpoint tensor in memory: values widened to float32, plus the dtype it was stored in (so a
 * re-save can keep it). The object is frozen; `data` is a typed array and stays writable.
 */
export interface NamedTensor {
  readonly kind: "tensor";
  readonly name: string;
  readonly dtype: FloatDtype;
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

/** Product of the dimensions (1 for a scalar). */
export function elementCount(shape: readonly number[]): number {
  return shape.reduce((n, d) => n * d, 1);
}

/**
 * Builds a frozen tensor, checking that `data` holds exactly as many values as `shape` implies.
 * @example
 * ```ts
 * import { namedTensor } from "./tensor.ts";
 *
 * namedTensor("model.norm.weight", [4], new Float32Array(4));
 * ```
 */
export function namedTensor(
  name: string,
  shape: readonly number[],
  data: Float32Array,
  dtype: FloatDtype = "F32",
): NamedTensor {
  for (const d of shape) {
    if (!Number.isInteger(d) || d < 0) {
      throw new RangeError(`tensor ${name}: shape [${shape.join(", ")}] has an invalid dimension`);
    }
  }
  const n = elementCount(shape);
  if (data.length !== n) {
    throw new RangeError(
      `tensor ${name}: shape [${shape.join(", ")}] needs ${n} values, data has ${data.length}`,
    );
  }
  return Object.freeze({ kind: "tensor", name, dtype, shape: Object.freeze([...shape]), data });
}
