import type { Shape } from "./shape.ts";
import { formatShape } from "./shape.ts";

/**
 * A graph could not be built: wrong dtype, incompatible shapes, a bad attribute. The message names
 * the op and every input shape so the failing call can be found without a debugger.
 */
export class OnnxGraphError extends Error {
  override readonly name = "OnnxGraphError";
  constructor(
    readonly op: string,
    readonly detail: string,
    readonly inputShapes: readonly (Shape | undefined)[] = [],
  ) {
    const shapes = inputShapes.length > 0
      ? ` (inputs: ${inputShapes.map((s) => s ? formatShape(s) : "none").join(", ")})`
      : "";
    super(`${op}: ${detail}${shapes}`);
  }
}
