/**
 * The ONNX graph compiler: a typed graph IR, op builders with vector-Jacobian rules, reverse-mode
 * autodiff, and an ONNX ModelProto writer (opset 18).
 *
 * @example
 * ```ts
 * import * as onnx from "./mod.ts";
 *
 * const g = new onnx.Graph("linear");
 * const x = g.input("x", "float32", ["batch", 3]);
 * const w = g.initializer("w", onnx.tensor("float32", [3, 2], new Float32Array(6)));
 * const loss = onnx.reduceMean(onnx.matMul(x, w));
 * const [gw] = onnx.gradients(g, loss, [w]);
 * g.output(loss, "loss");
 * g.output(gw, "grad_w");
 * const bytes = onnx.toOnnxModel(g);
 * ```
 *
 * Building: `Graph` declares inputs, initializers and outputs; op builders (`matMul`, `add`, ...)
 * take values and append checked nodes to the values' graph (number operands become scalar
 * constants of the other operand's dtype). Dims are numbers or symbolic names; a symbolic dim
 * broadcasts only against itself or 1, and symbolic sizes are read at run time with Shape ops.
 *
 * Differentiating: `gradients(graph, loss, wrt)` appends the backward nodes to the same graph.
 * Every built-in op carries its vector-Jacobian rule next to its builder (ops/*.ts). To add an
 * op, `defineOp(type, infer, vjp)` and `apply(spec, inputs, attrs)`; the rule emits its
 * gradient with the same builders, so it stays plain ONNX.
 *
 * Writing: `toOnnxModel` embeds initializers; `toOnnxModelWithExternalData` moves large ones to a
 * side file. Opset 18, IR version 8; unused nodes are dropped on write.
 *
 * Built on the compiler, each with its own entry point: `optim/mod.ts` (AdamW, clipping, the
 * guarded step as graph nodes), `runtime/mod.ts` (running the models) and `train-step/mod.ts`
 * (the policy-gradient train step and its runner). Files inside adapters/onnx import the concrete
 * modules, never a `mod.ts` of their own folder: this one re-exports them, so that import would
 * close a circle (tests/architecture/).
 */
export type { DType, TensorArray } from "./dtype.ts";
export { arrayConstructor, DTYPES, isFloat, isInteger, ONNX_DTYPE_CODE } from "./dtype.ts";
export type { Dim, Shape } from "./shape.ts";
export { broadcastShapes, dimProduct, formatShape, isStatic, staticSize } from "./shape.ts";
export { OnnxGraphError } from "./errors.ts";
export type {
  Attr,
  Attrs,
  GraphOutput,
  Initializer,
  Node,
  OpSpec,
  TensorData,
  Value,
  ValueType,
  VjpContext,
  VjpRule,
} from "./ir.ts";
export { attr, Graph, tensor } from "./ir.ts";
export { apply, castTo, constant, defineOp, int64s, scalar } from "./ops/common.ts";
export type { Operand } from "./ops/binary.ts";
export {
  add,
  and,
  div,
  equal,
  greater,
  greaterOrEqual,
  less,
  lessOrEqual,
  max,
  min,
  mul,
  not,
  or,
  pow,
  sub,
} from "./ops/binary.ts";
export {
  abs,
  erf,
  exp,
  identity,
  log,
  neg,
  reciprocal,
  relu,
  sigmoid,
  sign,
  sqrt,
  tanh,
} from "./ops/unary.ts";
export { clip, where } from "./ops/select.ts";
export {
  logSoftmax,
  reduceLogSumExp,
  reduceMax,
  reduceMean,
  reduceSum,
  softmax,
  sumToShape,
} from "./ops/reduce.ts";
export {
  concat,
  expand,
  reshape,
  reshapeLike,
  shapeOf,
  shapeTensor,
  shapeTensorOf,
  slice,
  SLICE_END,
  split,
  squeeze,
  transpose,
  unsqueeze,
  zerosLike,
} from "./ops/shape.ts";
export type { GemmOptions } from "./ops/matmul.ts";
export { gemm, matMul } from "./ops/matmul.ts";
export { rmsNormalization } from "./ops/norm.ts";
export { rotaryEmbedding } from "./ops/rotary.ts";
export { GQA_HEAD_SIZE_MULTIPLE, groupQueryAttention } from "./ops/attention.ts";
export type { ScatterReduction } from "./ops/gather.ts";
export { gather, gatherElements, scatterElements } from "./ops/gather.ts";
export type { GradientOptions } from "./autodiff.ts";
export { gradients } from "./autodiff.ts";
export type {
  ExternalDataOptions,
  ModelWithExternalData,
  OnnxModelOptions,
} from "./onnx-writer.ts";
export { IR_VERSION, OPSET, toOnnxModel, toOnnxModelWithExternalData } from "./onnx-writer.ts";
