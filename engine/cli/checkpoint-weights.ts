/** `deno task pretrain --init DIR`: the checkpoint a pretraining run starts from. */
import { UsageError } from "../../events/cli/mod.ts";
import type { NamedTensor } from "../../adapters/hf/mod.ts";
import { type EmbeddedSize, loadEmbeddedModel } from "../../adapters/model/mod.ts";

/**
 * The weights of checkpoint `dir`, in the order and shapes of `fresh` (the size's parameters); a
 * UsageError naming the first tensor missing or of another shape.
 *
 * @example
 * ```ts
 * import { initEmbeddedModel, type NormalFill } from "../../adapters/model/mod.ts";
 * import { checkpointWeights } from "./checkpoint-weights.ts";
 *
 * declare const normal: NormalFill; // keyed N(0, std^2) draws (engine/random's fillNormal)
 * const fresh = initEmbeddedModel(normal, "base");
 * const weights = await checkpointWeights("adapters/model/embedded", fresh, "base");
 * ```
 */
export async function checkpointWeights(
  dir: string,
  fresh: readonly NamedTensor[],
  size: EmbeddedSize,
): Promise<NamedTensor[]> {
  const model = await loadEmbeddedModel(dir);
  return fresh.map((p) => {
    const t = model.tensors.get(p.name);
    if (t === undefined || t.shape.join("x") !== p.shape.join("x")) {
      throw new UsageError(
        `--init ${dir}: tensor ${p.name} is ${t ? t.shape.join("x") : "missing"}, the ${size} ` +
          `model's is ${p.shape.join("x")}; give a checkpoint of --size ${size}`,
      );
    }
    return t;
  });
}
