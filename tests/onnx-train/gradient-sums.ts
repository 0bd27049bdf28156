/**
 * The `accumulate` graph's gradient sums (TrainStepGraph.gradientSums) fed as zeros and cut back
 * into one gradient per trainable parameter, for tests that read the graph's gradient directly.
 */
import { type HostTensor, hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import type { TrainStepGraph } from "../../adapters/onnx/train-step/graph.ts";

const size = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Feeds that start every gradient sum at zero. */
export function zeroGradientSums(graph: TrainStepGraph): Record<string, HostTensor> {
  return Object.fromEntries(graph.gradientSums.map((sum) => [
    sum.name,
    hostTensor("float32", sum.shape, new Float32Array(size(sum.shape))),
  ]));
}

/**
 * Each trainable parameter's gradient, by name: its row-major slice of its group's sum.
 *
 * @example
 * ```ts
 * import type { HostTensor, Session } from "../../adapters/onnx/runtime/mod.ts";
 * import type { TrainStepGraph } from "../../adapters/onnx/train-step/mod.ts";
 * import { gradientsFromSums } from "./gradient-sums.ts";
 *
 * declare const graph: TrainStepGraph; // buildTrainStep(config, "accumulate")
 * declare const session: Session; // runtime.load(graph.model)
 * declare const feeds: Record<string, HostTensor>; // params, batch, zero gradient sums
 * declare const shapes: Record<string, readonly number[]>; // each trainable parameter's
 * const grads = gradientsFromSums(graph, (await session.run(feeds)).host, shapes);
 * ```
 */
export function gradientsFromSums(
  graph: TrainStepGraph,
  outputs: Readonly<Record<string, HostTensor>>,
  shapes: Readonly<Record<string, readonly number[]>>,
): Record<string, Float32Array> {
  const grads: Record<string, Float32Array> = {};
  for (const sum of graph.gradientSums) {
    const data = outputs[sum.next].data as Float32Array;
    let at = 0;
    for (const name of sum.params) {
      const n = size(shapes[name]);
      grads[name] = data.slice(at, at + n);
      at += n;
    }
  }
  return grads;
}
