/**
 * Tensors of one layout as one buffer, so that elementwise optimizer math runs once per group
 * instead of once per tensor: AdamW is about 20 nodes, and the 0.5B shape's 336 LoRA matrices
 * made its apply graph 10,101 nodes, where onnxruntime's session creation grows faster than the
 * node count and the WebGPU EP dispatches every node from the host. Tensors whose dims after
 * the first agree (every LoRA B [out, r]; every LoRA A [r, in] of one `in`) are stacked along
 * axis 0 with no reshape and split back after. An elementwise op computes each element of the
 * stack as it computes that element alone, so the results are bit for bit the per-tensor ones.
 *
 * WebGPU binds each input and output of a kernel as a storage buffer, and an adapter need offer
 * only 8 per shader stage; onnxruntime's WebGPU Split does not divide its work to fit that, so
 * each Concat and Split here takes at most `MAX_FAN` tensors and larger groups become a tree.
 */
import type { Value } from "../ir.ts";
import { concat, split } from "../ops/shape.ts";

/** Tensors one Concat or Split node joins or makes: 8 storage buffers, one the other side. */
export const MAX_FAN = 7;

/**
 * Indices of `values` (graph values, or parameter specs) grouped by layout (dtype, rank and every dim after the first), each group
 * in the order given and the groups in order of their first member. A scalar has no rows to
 * stack and stays alone.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { rowGroups } from "./row-groups.ts";
 *
 * declare const a: Value, b: Value, c: Value;
 * rowGroups([a, b, c]); // a and c [16, 896], b [896, 16]: [[0, 2], [1]]
 * ```
 */
export function rowGroups(values: readonly Pick<Value, "dtype" | "shape">[]): number[][] {
  const groups = new Map<string, number[]>();
  values.forEach((v, i) => {
    const key = v.shape.length === 0
      ? `scalar:${i}`
      : `${v.dtype}:${v.shape.length}:${v.shape.slice(1).join(",")}`;
    const group = groups.get(key);
    if (group) group.push(i);
    else groups.set(key, [i]);
  });
  return [...groups.values()];
}

/**
 * `values` (one layout) stacked along axis 0: the value itself when alone, else a tree of Concat
 * nodes of at most MAX_FAN inputs each.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { stackRows } from "./row-groups.ts";
 *
 * declare const a: Value, b: Value;
 * stackRows([a, b]); // [a rows + b rows, ...]
 * ```
 */
export function stackRows(values: readonly Value[]): Value {
  const join = (tree: Tree<Value>): Value => Array.isArray(tree) ? concat(tree.map(join), 0) : tree;
  return join(fanTree(values));
}

/**
 * The inverse of `stackRows`: `stacked` cut along axis 0 into pieces shaped like `like`, through
 * the same tree, of Split nodes.
 *
 * @example
 * ```ts
 * import type { Value } from "../ir.ts";
 * import { stackRows, unstackRows } from "./row-groups.ts";
 *
 * declare const a: Value, b: Value;
 * const [a2, b2] = unstackRows(stackRows([a, b]), [a, b]);
 * ```
 */
export function unstackRows(stacked: Value, like: readonly Value[]): Value[] {
  const cut = (x: Value, tree: Tree<Value>): Value[] => {
    if (!Array.isArray(tree)) return [x];
    const pieces = split(x, 0, tree.map(rowsOf));
    return tree.flatMap((child, i) => cut(pieces[i], child));
  };
  return cut(stacked, fanTree(like));
}

/** A leaf, or the children joined at one node. */
type Tree<T> = T | Tree<T>[];

/**
 * `items` as a tree whose nodes have at most MAX_FAN children, built from the leaves up so that
 * it has the fewest nodes and levels (168 tensors: 24 + 4 + 1 nodes).
 */
function fanTree<T>(items: readonly T[]): Tree<T> {
  let level: Tree<T>[] = [...items];
  while (level.length > 1) {
    const next: Tree<T>[] = [];
    for (let i = 0; i < level.length; i += MAX_FAN) {
      const run = level.slice(i, i + MAX_FAN);
      next.push(run.length === 1 ? run[0] : run);
    }
    level = next;
  }
  return level[0];
}

/** Rows (axis-0 length) of a subtree's values stacked; static, as parameters are. */
function rowsOf(tree: Tree<Value>): number {
  return Array.isArray(tree)
    ? tree.reduce((n: number, t) => n + rowsOf(t), 0)
    : tree.shape[0] as number;
}
