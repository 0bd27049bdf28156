/**
 * Serializes a Graph to an ONNX ModelProto, with initializers either embedded or moved to an
 * external data file.
 *
 * Opset 18: it is the first opset where every Reduce op takes `axes` as an input (uniform
 * reduction code) and Split has `num_outputs`, while staying old enough that each op resolves to
 * a kernel version every onnxruntime execution provider (CPU, WASM, WebGPU) registers; newer
 * opsets re-version ops like Reshape and Cast, which risks silent CPU fallback on WebGPU.
 */
import type { DType } from "./dtype.ts";
import { ONNX_DTYPE_CODE } from "./dtype.ts";
import { OnnxGraphError } from "./errors.ts";
import type { Attr, Graph, TensorData, Value } from "./ir.ts";
import { ATTRIBUTE_TYPE, ModelProto } from "./onnx-proto.ts";
import type { Shape } from "./shape.ts";

/** The ONNX opset the writer declares for the default domain. */
export const OPSET = 18;
/** ONNX IR version that goes with opset 18. */
export const IR_VERSION = 8;

/** Options of the writer. */
export interface OnnxModelOptions {
  /** Written to ModelProto.producer_name (default "polyrl"). */
  readonly producerName?: string;
  readonly docString?: string;
}

/** Where to put initializer bytes outside the model file. */
export interface ExternalDataOptions extends OnnxModelOptions {
  /** File name stored in the model, relative to the model file's directory. */
  readonly location: string;
  /** Initializers smaller than this many bytes stay embedded (default 1024). */
  readonly minBytes?: number;
}

/** A model whose large initializers live in a separate data file. */
export interface ModelWithExternalData {
  readonly model: Uint8Array;
  /** Contents of the file named by `location`. */
  readonly data: Uint8Array;
  readonly location: string;
}

// External tensors start at this alignment so a loader may map them directly.
const EXTERNAL_ALIGN = 64;

if (new Uint8Array(new Uint16Array([1]).buffer)[0] !== 1) {
  throw new Error("onnx-writer: raw_data is little-endian and this host is big-endian");
}

/**
 * Encodes `graph` as ONNX ModelProto bytes with every initializer embedded.
 *
 * @example
 * ```ts
 * import * as ort from "onnxruntime-web/webgpu";
 * import type { Graph } from "./ir.ts";
 * import { toOnnxModel } from "./onnx-writer.ts";
 *
 * declare const g: Graph;
 * const bytes = toOnnxModel(g);
 * const session = await ort.InferenceSession.create(bytes);
 * ```
 */
export function toOnnxModel(graph: Graph, options: OnnxModelOptions = {}): Uint8Array {
  return encode(graph, options, () => undefined);
}

/**
 * Encodes `graph` with initializers of at least `minBytes` moved to an external data file
 * (ONNX external data: location, offset, length). Write `data` next to the model under
 * `location`; onnxruntime-node resolves it relative to the model path, onnxruntime-web takes it
 * through the `externalData` session option.
 *
 * @example
 * ```ts
 * import type { Graph } from "./ir.ts";
 * import { toOnnxModelWithExternalData } from "./onnx-writer.ts";
 *
 * declare const g: Graph;
 * const { model, data } = toOnnxModelWithExternalData(g, { location: "weights.bin" });
 * ```
 */
export function toOnnxModelWithExternalData(
  graph: Graph,
  options: ExternalDataOptions,
): ModelWithExternalData {
  const minBytes = options.minBytes ?? 1024;
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const model = encode(graph, options, (bytes) => {
    if (bytes.byteLength < minBytes) return undefined;
    const pad = (EXTERNAL_ALIGN - (offset % EXTERNAL_ALIGN)) % EXTERNAL_ALIGN;
    if (pad > 0) chunks.push(new Uint8Array(pad));
    offset += pad;
    const start = offset;
    chunks.push(bytes);
    offset += bytes.byteLength;
    return { offset: start, length: bytes.byteLength };
  });
  const data = new Uint8Array(offset);
  let at = 0;
  for (const c of chunks) {
    data.set(c, at);
    at += c.byteLength;
  }
  return { model, data, location: options.location };
}

type Placement = (bytes: Uint8Array) => { offset: number; length: number } | undefined;

function encode(graph: Graph, options: OnnxModelOptions, place: Placement): Uint8Array {
  const outputs = new Set(graph.outputs.map((o) => o.value.id));
  if (graph.outputs.length === 0) {
    throw new OnnxGraphError("toOnnxModel", `graph ${graph.name} has no outputs`);
  }
  const { folded, nameOf } = foldOutputRenames(graph, outputs);
  const nodes = liveNodes(graph, outputs).filter((node) => !folded.has(node.id));
  const message = {
    irVersion: IR_VERSION,
    producerName: options.producerName ?? "polyrl",
    docString: options.docString ?? "",
    // onnxruntime's own domain (com.microsoft) is at version 1.
    opsetImport: [
      { domain: "", version: OPSET },
      ...[...new Set(nodes.flatMap((n) => n.spec.domain ? [n.spec.domain] : []))]
        .map((domain) => ({ domain, version: 1 })),
    ],
    graph: {
      name: graph.name,
      node: nodes.map((node) => ({
        name: node.name,
        opType: node.spec.type,
        domain: node.spec.domain ?? "",
        input: trimOptional(node.inputs.map((v) => v ? nameOf(v) : "")),
        output: node.outputs.map(nameOf),
        attribute: Object.entries(node.attrs).map(([name, a]) => attribute(name, a)),
      })),
      initializer: graph.initializers.map((init) => {
        const bytes = rawBytes(init.tensor);
        const where = place(bytes);
        const base = tensorHeader(init.value.name, init.tensor.dtype, init.tensor.shape);
        if (!where) return { ...base, rawData: bytes };
        return {
          ...base,
          dataLocation: 1,
          externalData: [
            { key: "location", value: (options as ExternalDataOptions).location },
            { key: "offset", value: String(where.offset) },
            { key: "length", value: String(where.length) },
          ],
        };
      }),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map((o) => valueInfo(o.value)),
      // Every intermediate's type and shape as the IR inferred it, symbolic dims by the IR's names:
      // onnxruntime's own inference names each dim it cannot derive (a Reshape to -1) afresh, so
      // its memory planner finds no two such tensors alike and scans an ever longer free list for
      // each new one. With these, creating the 0.5B LoRA accumulate session took 1.65 s of CPU
      // instead of 11.75 s (docs/PERFORMANCE.md); the kernels and the values are the same.
      valueInfo: nodes.flatMap((node) =>
        node.outputs.filter((v) => !outputs.has(v.id) && nameOf(v) === v.name).map(valueInfo)
      ),
    },
  };
  const buf = ModelProto.encode(message).finish();
  return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
}

/**
 * Identity nodes that only rename a computed value to an output's name (`Graph.output(v, name)`)
 * are dropped and the value takes the output's name instead: onnxruntime copies a tensor through
 * an Identity whose result is a graph output (the decode graph's KV cache, every step), and the
 * renamed value is the same tensor. A value that is a graph input or initializer, is itself an
 * output, or is published under two names keeps its Identity.
 */
function foldOutputRenames(graph: Graph, outputs: ReadonlySet<number>) {
  const renames = new Map<number, { node: number; name: string; count: number }>();
  for (const o of graph.outputs) {
    const node = o.value.producer;
    const source = node?.inputs[0];
    if (node?.spec.type !== "Identity" || node.spec.domain || !source?.producer) continue;
    const seen = renames.get(source.id);
    renames.set(source.id, { node: node.id, name: o.name, count: (seen?.count ?? 0) + 1 });
  }
  const folded = new Set<number>();
  const names = new Map<number, string>();
  for (const [source, r] of renames) {
    if (r.count !== 1 || outputs.has(source)) continue;
    folded.add(r.node);
    names.set(source, r.name);
  }
  return { folded, nameOf: (v: Value) => names.get(v.id) ?? v.name };
}

/** Nodes that some graph output depends on: gradient bookkeeping may leave dead ones behind. */
function liveNodes(graph: Graph, outputs: Set<number>) {
  const live = new Set<number>(outputs);
  const kept = [];
  for (let i = graph.nodes.length - 1; i >= 0; i--) {
    const node = graph.nodes[i];
    if (!node.outputs.some((v) => live.has(v.id))) continue;
    kept.push(node);
    for (const v of node.inputs) if (v) live.add(v.id);
  }
  return kept.reverse();
}

function trimOptional(names: string[]): string[] {
  let end = names.length;
  while (end > 0 && names[end - 1] === "") end--;
  return names.slice(0, end);
}

function tensorHeader(name: string, dtype: DType, shape: readonly number[]) {
  return { name, dataType: ONNX_DTYPE_CODE[dtype], dims: [...shape] };
}

function rawBytes(t: TensorData): Uint8Array {
  return new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
}

function attribute(name: string, a: Attr) {
  const type = ATTRIBUTE_TYPE[a.type];
  switch (a.type) {
    case "int":
      return { name, type, i: a.value };
    case "float":
      return { name, type, f: a.value };
    case "ints":
      return { name, type, ints: [...a.value] };
    case "floats":
      return { name, type, floats: [...a.value] };
    case "string":
      return { name, type, s: new TextEncoder().encode(a.value) };
    case "tensor":
      return {
        name,
        type,
        t: { ...tensorHeader("", a.value.dtype, a.value.shape), rawData: rawBytes(a.value) },
      };
  }
}

function valueInfo(v: Value) {
  return {
    name: v.name,
    type: { tensorType: { elemType: ONNX_DTYPE_CODE[v.dtype], shape: shapeProto(v.shape) } },
  };
}

function shapeProto(shape: Shape) {
  return {
    dim: shape.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })),
  };
}
