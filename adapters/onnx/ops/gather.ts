/**
 * Indexing ops and their VJP rules: Gather (embedding lookup; gradient scattered back with
 * ScatterElements reduction "add", int32 indices so WebGPU keeps it on the GPU), GatherElements
 * (token log-prob pick) and ScatterElements.
 */
import type { Value } from "../ir.ts";
import { attr } from "../ir.ts";
import { OnnxGraphError } from "../errors.ts";
import { normalizeAxis } from "../shape.ts";
import { apply, defineOp, expectDType, fail } from "./common.ts";
import { expand, reshape, zerosLike } from "./shape.ts";

const INDEX_TYPES = ["int32", "int64"] as const;

function axisOf(op: string, axis: number, rank: number, inputs: Value[]): number {
  return normalizeAxis(axis, rank) ??
    fail(op, `axis ${axis} out of range for rank ${rank}`, inputs);
}

const GATHER = defineOp("Gather", (inputs, attrs) => {
  const [data, indices] = inputs as Value[];
  expectDType("Gather", indices, INDEX_TYPES, inputs);
  const axis = axisOf("Gather", attrs.axis.value as number, data.shape.length, inputs as Value[]);
  const shape = [...data.shape.slice(0, axis), ...indices.shape, ...data.shape.slice(axis + 1)];
  return [{ dtype: data.dtype, shape }];
}, ({ node, grads, needs }) => {
  const g = grads[0];
  if (!g || !needs[0]) return [undefined, undefined];
  const [data, indices] = node.inputs as Value[];
  const r = data.shape.length;
  const axis = normalizeAxis(node.attrs.axis.value as number, r)!;
  // Flatten the indices to one axis of length N, then scatter-add rows of g into zeros.
  const flat = reshape(g, [...data.shape.slice(0, axis), -1, ...data.shape.slice(axis + 1)]);
  const ones = (n: number) => new Array<number>(n).fill(1);
  const idx = reshape(indices, [...ones(axis), -1, ...ones(r - axis - 1)]);
  const idxFull = expand(idx, flat.shape);
  return [scatterElements(zerosLike(data), idxFull, flat, axis, "add"), undefined];
});

/**
 * Gather slices of `data` along `axis` at `indices` (int32 preferred).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { gather } from "./gather.ts";
 *
 * declare const embedding: Value, tokens: Value;
 * gather(embedding, tokens, 0); // [V, d] x [b, t] -> [b, t, d]
 * ```
 */
export function gather(data: Value, indices: Value, axis = 0): Value {
  return apply(GATHER, [data, indices], { axis: attr.int(axis) });
}

const GATHER_ELEMENTS = defineOp("GatherElements", (inputs, attrs) => {
  const [data, indices] = inputs as Value[];
  expectDType("GatherElements", indices, INDEX_TYPES, inputs);
  axisOf("GatherElements", attrs.axis.value as number, data.shape.length, inputs as Value[]);
  if (indices.shape.length !== data.shape.length) {
    fail("GatherElements", "indices must have the rank of data", inputs);
  }
  return [{ dtype: data.dtype, shape: indices.shape }];
}, ({ node, grads, needs }) => {
  const g = grads[0];
  if (!g || !needs[0]) return [undefined, undefined];
  const [data, indices] = node.inputs as Value[];
  const axis = node.attrs.axis.value as number;
  return [scatterElements(zerosLike(data), indices, g, axis, "add"), undefined];
});

/**
 * Pick elements of `data` along `axis` at `indices` (same rank as data).
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { gatherElements } from "./gather.ts";
 * import { unsqueeze } from "./shape.ts";
 *
 * declare const logp: Value, targets: Value;
 * gatherElements(logp, unsqueeze(targets, [2]), 2); // per-token log-prob
 * ```
 */
export function gatherElements(data: Value, indices: Value, axis: number): Value {
  return apply(GATHER_ELEMENTS, [data, indices], { axis: attr.int(axis) });
}

/** How ScatterElements combines an update with the existing element. */
export type ScatterReduction = "none" | "add";

const SCATTER_ELEMENTS = defineOp("ScatterElements", (inputs, attrs) => {
  const [data, indices, updates] = inputs as Value[];
  expectDType("ScatterElements", indices, INDEX_TYPES, inputs);
  axisOf("ScatterElements", attrs.axis.value as number, data.shape.length, inputs as Value[]);
  const same = indices.shape.length === updates.shape.length &&
    indices.shape.every((d, i) => d === updates.shape[i]);
  if (!same || indices.shape.length !== data.shape.length) {
    fail("ScatterElements", "indices and updates need one shape, of data's rank", inputs);
  }
  if (updates.dtype !== data.dtype) fail("ScatterElements", "updates dtype differs", inputs);
  return [{ dtype: data.dtype, shape: data.shape }];
}, ({ node, grads, needs }) => {
  const g = grads[0];
  if (!g) return [undefined, undefined, undefined];
  if (node.attrs.reduction.value !== "add") {
    throw new OnnxGraphError("ScatterElements", "gradient is only defined for reduction add");
  }
  const indices = node.inputs[1]!;
  const axis = node.attrs.axis.value as number;
  return [
    needs[0] ? g : undefined,
    undefined,
    needs[2] ? gatherElements(g, indices, axis) : undefined,
  ];
});

/**
 * Write (or add, with reduction "add") `updates` into a copy of `data` at `indices` on `axis`.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { scatterElements } from "./gather.ts";
 *
 * declare const zeros: Value, idx: Value, rows: Value;
 * scatterElements(zeros, idx, rows, 0, "add");
 * ```
 */
export function scatterElements(
  data: Value,
  indices: Value,
  updates: Value,
  axis: number,
  reduction: ScatterReduction = "none",
): Value {
  return apply(SCATTER_ELEMENTS, [data, indices, updates], {
    axis: attr.int(axis),
    reduction: attr.string(reduction),
  });
}
