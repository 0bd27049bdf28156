/**
 * Reverse-mode automatic differentiation on the graph IR. Walks the nodes between `wrt` and the
 * loss in reverse topological order, calls each op's vector-Jacobian rule, and sums gradients of
 * values that feed several consumers. The gradient nodes are appended to the same graph, so one
 * model computes the loss and its gradients.
 */
import { isFloat } from "./dtype.ts";
import { OnnxGraphError } from "./errors.ts";
import type { Graph, Node, Value } from "./ir.ts";
import { formatShape, sameShape } from "./shape.ts";
import { scalar } from "./ops/common.ts";
import { add } from "./ops/binary.ts";
import { expand, zerosLike } from "./ops/shape.ts";

/** Options of `gradients`. */
export interface GradientOptions {
  /**
   * Gradient of the final objective with respect to `loss` (same shape). Default: 1 for a scalar
   * loss, ones for a tensor loss (the gradient of its sum).
   */
  readonly seed?: Value;
}

/**
 * Appends the gradient computation of `loss` with respect to each of `wrt` to the graph and
 * returns the gradient values (same dtype and shape as each `wrt`). A `wrt` the loss does not
 * depend on gets zeros.
 *
 * @example
 * ```ts
 * import { gradients } from "./autodiff.ts";
 * import type { Graph, Value } from "./ir.ts";
 * import { mul } from "./ops/binary.ts";
 * import { reduceMean } from "./ops/reduce.ts";
 *
 * declare const g: Graph;
 * declare const w: Value, b: Value, err: Value; // err computed from w and b
 * const loss = reduceMean(mul(err, err));
 * const [gw, gb] = gradients(g, loss, [w, b]);
 * g.output(gw, "grad_w");
 * ```
 */
export function gradients(
  graph: Graph,
  loss: Value,
  wrt: readonly Value[],
  options: GradientOptions = {},
): Value[] {
  if (loss.graph !== graph || wrt.some((v) => v.graph !== graph)) {
    throw new OnnxGraphError("gradients", "loss and wrt must belong to the graph");
  }
  if (!isFloat(loss.dtype)) throw new OnnxGraphError("gradients", `loss is ${loss.dtype}`);
  for (const v of wrt) {
    if (!isFloat(v.dtype)) {
      throw new OnnxGraphError("gradients", `wrt "${v.name}" is ${v.dtype}, not float`);
    }
  }
  const dependent = dependsOn(graph, wrt);
  const nodes = ancestorNodes(loss).filter((n) => n.outputs.some((o) => dependent.has(o.id)));

  const pending = new Map<number, Value[]>();
  const push = (v: Value, g: Value) => {
    const list = pending.get(v.id);
    if (list) list.push(g);
    else pending.set(v.id, [g]);
  };
  const take = (v: Value): Value | undefined => {
    const list = pending.get(v.id);
    if (!list) return undefined;
    // A value read by several consumers gets the sum of their gradients.
    const sum = list.reduce((a, b) => add(a, b));
    pending.set(v.id, [sum]);
    return sum;
  };
  push(loss, options.seed ?? defaultSeed(loss));
  if (options.seed) checkGradient("gradients", loss, options.seed);

  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i];
    const grads = node.outputs.map(take);
    if (grads.every((g) => g === undefined)) continue;
    const needs = node.inputs.map((v) =>
      v !== undefined && dependent.has(v.id) && isFloat(v.dtype)
    );
    if (!needs.some(Boolean)) continue;
    if (!node.spec.vjp) {
      throw new OnnxGraphError(node.spec.type, `has no gradient rule (node ${node.name})`);
    }
    const inputGrads = node.spec.vjp({ node, grads, needs });
    node.inputs.forEach((v, k) => {
      const g = inputGrads[k];
      if (!v || !needs[k] || !g) return;
      checkGradient(node.spec.type, v, g);
      push(v, g);
    });
  }
  return wrt.map((v) => take(v) ?? zerosLike(v));
}

function defaultSeed(loss: Value): Value {
  const one = scalar(loss.graph, 1, loss.dtype);
  return loss.shape.length === 0 ? one : expand(one, loss.shape);
}

function checkGradient(op: string, v: Value, g: Value): void {
  if (g.dtype !== v.dtype || !sameShape(g.shape, v.shape)) {
    throw new OnnxGraphError(
      op,
      `gradient for "${v.name}" is ${g.dtype}${formatShape(g.shape)}, ` +
        `expected ${v.dtype}${formatShape(v.shape)}`,
    );
  }
}

/** Ids of the values that depend on any of `wrt` (including `wrt` themselves). */
function dependsOn(graph: Graph, wrt: readonly Value[]): Set<number> {
  const set = new Set(wrt.map((v) => v.id));
  for (const node of graph.nodes) {
    if (node.inputs.some((v) => v && set.has(v.id))) {
      for (const o of node.outputs) set.add(o.id);
    }
  }
  return set;
}

/** Nodes that `loss` depends on, in topological order. */
function ancestorNodes(loss: Value): Node[] {
  const seen = new Set<number>();
  const out: Node[] = [];
  const stack: Value[] = [loss];
  while (stack.length > 0) {
    const node = stack.pop()!.producer;
    if (!node || seen.has(node.id)) continue;
    seen.add(node.id);
    out.push(node);
    for (const v of node.inputs) if (v) stack.push(v);
  }
  return out.sort((a, b) => a.id - b.id);
}
