/**
 * The graph IR: values (typed tensors with static or symbolic shapes), nodes (one ONNX op each)
 * and the Graph that owns them. Nodes are appended in topological order by construction, and
 * every node's output dtype and shape is inferred and checked by its op spec when it is built.
 */
import type { DType, TensorArray } from "./dtype.ts";
import { arrayConstructor } from "./dtype.ts";
import { OnnxGraphError } from "./errors.ts";
import type { Dim, Shape } from "./shape.ts";
import { formatShape, staticSize } from "./shape.ts";

/** Concrete tensor contents, used for initializers and constants. */
export interface TensorData {
  readonly dtype: DType;
  readonly shape: readonly number[];
  /** Row-major elements; float16 as raw half bits in a Uint16Array, bool as 0/1 bytes. */
  readonly data: TensorArray;
}

/** An ONNX node attribute, tagged with its ONNX attribute type. */
export type Attr =
  | { readonly type: "int"; readonly value: number }
  | { readonly type: "float"; readonly value: number }
  | { readonly type: "ints"; readonly value: readonly number[] }
  | { readonly type: "floats"; readonly value: readonly number[] }
  | { readonly type: "string"; readonly value: string }
  | { readonly type: "tensor"; readonly value: TensorData };

/** Attribute constructors: `attr.int(1)`, `attr.float(0.5)`, `attr.ints([0, 1])`. */
export const attr = Object.freeze({
  int: (value: number): Attr => Object.freeze({ type: "int", value }),
  float: (value: number): Attr => Object.freeze({ type: "float", value }),
  ints: (value: readonly number[]): Attr => Object.freeze({ type: "ints", value: [...value] }),
  floats: (value: readonly number[]): Attr => Object.freeze({ type: "floats", value: [...value] }),
  string: (value: string): Attr => Object.freeze({ type: "string", value }),
  tensor: (value: TensorData): Attr => Object.freeze({ type: "tensor", value }),
});

/** Node attributes by ONNX name. */
export type Attrs = Readonly<Record<string, Attr>>;

/** A tensor in a graph: a graph input, an initializer, or an output of a node. */
export interface Value {
  readonly kind: "value";
  readonly graph: Graph;
  /** Unique within the graph; also the order of creation. */
  readonly id: number;
  /** The ONNX tensor name (unique within the graph). */
  readonly name: string;
  readonly dtype: DType;
  readonly shape: Shape;
  /** The node that computes this value, or undefined for graph inputs and initializers. */
  readonly producer: Node | undefined;
}

/** The dtype and shape an op infers for one output. */
export interface ValueType {
  readonly dtype: DType;
  readonly shape: Shape;
}

/** What a vector-Jacobian rule receives for one node. */
export interface VjpContext {
  readonly node: Node;
  /** Gradient of the loss with respect to each node output; undefined where none flows. */
  readonly grads: readonly (Value | undefined)[];
  /** Which inputs need a gradient; rules skip work for the others. */
  readonly needs: readonly boolean[];
}

/**
 * A vector-Jacobian rule: given gradients of a node's outputs, emit ONNX nodes (through the op
 * builders) that compute the gradient for each input. Undefined marks an input that gets none
 * (not needed, or not differentiable, such as indices).
 */
export type VjpRule = (ctx: VjpContext) => readonly (Value | undefined)[];

/** How an ONNX op type checks its inputs and differentiates. */
export interface OpSpec {
  /** ONNX op type, e.g. "MatMul". */
  readonly type: string;
  /** ONNX domain; "" (default) is the standard ai.onnx domain. */
  readonly domain?: string;
  /** Output dtypes and shapes, or throws OnnxGraphError naming the op and the input shapes. */
  readonly infer: (inputs: readonly (Value | undefined)[], attrs: Attrs) => readonly ValueType[];
  /** Reverse-mode rule; absent for ops that are never differentiated through (Shape, Equal). */
  readonly vjp?: VjpRule;
}

/** One op application. */
export interface Node {
  readonly kind: "node";
  readonly id: number;
  readonly name: string;
  readonly spec: OpSpec;
  /** Optional ONNX inputs that are skipped are undefined (written as ""). */
  readonly inputs: readonly (Value | undefined)[];
  readonly outputs: readonly Value[];
  readonly attrs: Attrs;
}

/** A graph output: the value and the name it is published under. */
export interface GraphOutput {
  readonly name: string;
  readonly value: Value;
}

/** A graph initializer: a value with stored contents (weights). */
export interface Initializer {
  readonly value: Value;
  readonly tensor: TensorData;
}

/** Builds a frozen TensorData after checking that the element count matches the shape. */
export function tensor(dtype: DType, shape: readonly number[], data: TensorArray): TensorData {
  const n = staticSize(shape) ?? 0;
  const expected = arrayConstructor(dtype);
  if (!(data instanceof expected)) {
    throw new OnnxGraphError(
      "tensor",
      `dtype ${dtype} needs a ${expected.name}, got ${data.constructor.name}`,
    );
  }
  if (data.length !== n) {
    throw new OnnxGraphError(
      "tensor",
      `shape ${formatShape(shape)} has ${n} elements, data has ${data.length}`,
    );
  }
  return Object.freeze({ dtype, shape: Object.freeze([...shape]), data });
}

/**
 * A computation graph under construction.
 *
 * @example
 * ```ts
 * import { Graph, tensor } from "./ir.ts";
 * import { toOnnxModel } from "./onnx-writer.ts";
 * import { matMul } from "./ops/matmul.ts";
 *
 * const g = new Graph("mlp");
 * const x = g.input("x", "float32", ["batch", 4]);
 * const w = g.initializer("w", tensor("float32", [4, 2], new Float32Array(8)));
 * g.output(matMul(x, w), "y");
 * const bytes = toOnnxModel(g);
 * ```
 */
export class Graph {
  readonly #nodes: Node[] = [];
  readonly #inputs: Value[] = [];
  readonly #outputs: GraphOutput[] = [];
  readonly #initializers: Initializer[] = [];
  readonly #names = new Set<string>();
  readonly #dimSources = new Map<string, { value: Value; axis: number }>();
  readonly #cache = new Map<string, Value>();
  #nextId = 0;

  constructor(readonly name: string = "graph") {}

  /** Nodes in topological (creation) order. */
  get nodes(): readonly Node[] {
    return this.#nodes;
  }
  /** Graph inputs in declaration order. */
  get inputs(): readonly Value[] {
    return this.#inputs;
  }
  /** Graph outputs in declaration order. */
  get outputs(): readonly GraphOutput[] {
    return this.#outputs;
  }
  /** Initializers (weights stored in the model) in declaration order. */
  get initializers(): readonly Initializer[] {
    return this.#initializers;
  }

  /**
   * Declares a graph input; string dims are symbolic (their size is fixed when the model runs).
   *
   * @example
   * ```ts
   * import type { Graph } from "./ir.ts";
   *
   * declare const g: Graph;
   * g.input("tokens", "int32", ["batch", "seq"]);
   * ```
   */
  input(name: string, dtype: DType, shape: Shape): Value {
    const value = this.#newValue(name, dtype, shape, undefined);
    this.#inputs.push(value);
    return value;
  }

  /**
   * Declares a weight stored in the model (or in its external data file).
   *
   * @example
   * ```ts
   * import { type Graph, tensor } from "./ir.ts";
   *
   * declare const g: Graph;
   * g.initializer("w", tensor("float32", [2, 2], new Float32Array([1, 0, 0, 1])));
   * ```
   */
  initializer(name: string, data: TensorData): Value {
    const value = this.#newValue(name, data.dtype, data.shape, undefined);
    this.#initializers.push(Object.freeze({ value, tensor: data }));
    return value;
  }

  /**
   * Publishes `value` as a graph output under `name` (default: the value's own name). A different
   * name adds an Identity node, since ONNX names an output by its tensor name.
   */
  output(value: Value, name?: string): Value {
    this.#own(value, "output");
    let published = value;
    if (name !== undefined && name !== value.name) {
      [published] = this.addNode(IDENTITY_OP, [value], {}, [name]);
    }
    if (this.#outputs.some((o) => o.name === published.name)) {
      throw new OnnxGraphError("output", `graph already has an output named "${published.name}"`);
    }
    this.#outputs.push(Object.freeze({ name: published.name, value: published }));
    return published;
  }

  /**
   * Appends one node: checks inputs belong to this graph, infers output types with the spec,
   * and returns the output values. Op builders (matMul, add, ...) call this; use it directly to
   * add an op the library does not cover.
   */
  addNode(
    spec: OpSpec,
    inputs: readonly (Value | undefined)[],
    attrs: Attrs = {},
    outputNames?: readonly string[],
  ): Value[] {
    for (const v of inputs) if (v) this.#own(v, spec.type);
    const types = spec.infer(inputs, attrs);
    const id = this.#nextId;
    const outputs: Value[] = [];
    const node: Node = Object.freeze({
      kind: "node",
      id,
      name: `${spec.type}_${id}`,
      spec,
      inputs: Object.freeze([...inputs]),
      outputs,
      attrs: Object.freeze({ ...attrs }),
    });
    types.forEach((t, i) => {
      const name = outputNames?.[i] ??
        this.#freeName(`${spec.type.toLowerCase()}_${id}${types.length > 1 ? `_${i}` : ""}`);
      outputs.push(this.#newValue(name, t.dtype, t.shape, node));
    });
    Object.freeze(outputs);
    this.#nodes.push(node);
    return outputs;
  }

  /**
   * Returns a cached value for `key`, building it on first use; shared constants and shape
   * tensors use this so a graph holds one copy of each.
   */
  cached(key: string, build: () => Value): Value {
    let v = this.#cache.get(key);
    if (!v) {
      v = build();
      this.#cache.set(key, v);
    }
    return v;
  }

  /** The first value (and axis) that carries symbolic dim `dim`, used to materialize it. */
  dimSource(dim: string): { value: Value; axis: number } | undefined {
    return this.#dimSources.get(dim);
  }

  #newValue(name: string, dtype: DType, shape: Shape, producer: Node | undefined): Value {
    if (this.#names.has(name)) {
      throw new OnnxGraphError("graph", `tensor name "${name}" is already used in ${this.name}`);
    }
    for (const d of shape) {
      if (typeof d === "number" && !(Number.isInteger(d) && d >= 0)) {
        throw new OnnxGraphError("graph", `dim ${d} of "${name}" is not a non-negative integer`, [
          shape,
        ]);
      }
    }
    this.#names.add(name);
    const value: Value = Object.freeze({
      kind: "value",
      graph: this,
      id: this.#nextId++,
      name,
      dtype,
      shape: Object.freeze([...shape]) as Shape,
      producer,
    });
    shape.forEach((d: Dim, axis) => {
      if (typeof d === "string" && !this.#dimSources.has(d)) {
        this.#dimSources.set(d, { value, axis });
      }
    });
    return value;
  }

  /** `base`, or `base_2`, `base_3`, ... when a user-chosen name already took it. */
  #freeName(base: string): string {
    let name = base;
    for (let n = 2; this.#names.has(name); n++) name = `${base}_${n}`;
    return name;
  }

  #own(value: Value, op: string): void {
    if (value.graph !== this) {
      throw new OnnxGraphError(op, `value "${value.name}" belongs to graph ${value.graph.name}`);
    }
  }
}

/** ONNX Identity; lives here because `Graph.output` renames values with it. */
export const IDENTITY_OP: OpSpec = Object.freeze({
  type: "Identity",
  infer: (inputs: readonly (Value | undefined)[]) => [{
    dtype: inputs[0]!.dtype,
    shape: inputs[0]!.shape,
  }],
  vjp: ({ grads }: VjpContext) => [grads[0]],
});
