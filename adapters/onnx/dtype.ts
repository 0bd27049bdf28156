/**
 * Element types of the graph IR and their ONNX codes.
 *
 * float64 exists so gradient checks can run in double precision on the CPU backend; int64 exists
 * only for tensors ONNX forces to int64 (shape tensors, axes, pads), because WebGPU runs int64
 * compute on the CPU. bool is the result of comparisons and the condition of Where.
 */
export type DType = "float32" | "float16" | "float64" | "int32" | "int64" | "bool";

/** Every dtype the IR knows, in a stable order. */
export const DTYPES: readonly DType[] = Object.freeze([
  "float32",
  "float16",
  "float64",
  "int32",
  "int64",
  "bool",
]);

/** ONNX TensorProto.DataType codes. */
export const ONNX_DTYPE_CODE: Readonly<Record<DType, number>> = Object.freeze({
  float32: 1,
  int32: 6,
  int64: 7,
  bool: 9,
  float16: 10,
  float64: 11,
});

/** Bytes per element, as stored in ONNX raw_data (float16 as IEEE half bits). */
export const DTYPE_BYTES: Readonly<Record<DType, number>> = Object.freeze({
  float32: 4,
  float16: 2,
  float64: 8,
  int32: 4,
  int64: 8,
  bool: 1,
});

/** The typed array that holds a tensor of each dtype (float16 as raw Uint16 bits). */
export type TypedArrayFor<D extends DType> = D extends "float32" ? Float32Array
  : D extends "float64" ? Float64Array
  : D extends "float16" ? Uint16Array
  : D extends "int32" ? Int32Array
  : D extends "int64" ? BigInt64Array
  : Uint8Array;

/** Any typed array a tensor may hold. */
export type TensorArray =
  | Float32Array
  | Float64Array
  | Uint16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array;

/** True for float32, float16 and float64: the dtypes that carry gradients. */
export function isFloat(dtype: DType): boolean {
  return dtype === "float32" || dtype === "float16" || dtype === "float64";
}

/** True for int32 and int64. */
export function isInteger(dtype: DType): boolean {
  return dtype === "int32" || dtype === "int64";
}

/** The typed-array constructor that stores `dtype`. */
export function arrayConstructor(dtype: DType): {
  new (length: number): TensorArray;
  readonly BYTES_PER_ELEMENT: number;
} {
  switch (dtype) {
    case "float32":
      return Float32Array;
    case "float64":
      return Float64Array;
    case "float16":
      return Uint16Array;
    case "int32":
      return Int32Array;
    case "int64":
      return BigInt64Array;
    case "bool":
      return Uint8Array;
  }
}
