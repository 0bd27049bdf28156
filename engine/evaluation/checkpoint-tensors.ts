/**
 * A run's checkpoint blob decoded into the tensors its worker group trained (the LoRA A/B
 * matrices or every base weight), checked against the model they belong to and against the
 * `parameterHash` its `checkpoint.saved` event recorded, so nothing altered or mismatched loads.
 */
import type { ModelConfig, NamedTensor } from "../../adapters/hf/mod.ts";
import {
  type DecoderSpec,
  decoderSpec,
  loraSpec,
  trainableParams,
} from "../../adapters/model/mod.ts";
import type { EventStore } from "../../events/mod.ts";
import { decodeSafetensors, hashTensors } from "../trainer/rollout/mod.ts";
import { EvaluationInputError } from "./errors.ts";
import type { RunCheckpoint } from "./model-source.ts";

/**
 * The decoder a checkpoint's tensors fit: the base config with the group's LoRA (no dropout:
 * nothing here trains), or the plain base for full weights.
 *
 * @example
 * ```ts
 * import type { HfModel } from "../../adapters/hf/mod.ts";
 * import { trainableParams } from "../../adapters/model/mod.ts";
 * import type { RunCheckpoint } from "./model-source.ts";
 * declare const model: HfModel; // the checkpoint's base model
 * declare const source: RunCheckpoint; // from resolveModelSource
 * trainableParams(checkpointSpec(model.config, source)).map((p) => p.name);
 * ```
 */
export function checkpointSpec(config: ModelConfig, source: RunCheckpoint): DecoderSpec {
  const t = source.trainable;
  return decoderSpec(
    config,
    t.kind === "lora" ? loraSpec({ rank: t.rank, alpha: t.alpha, targetModules: t.targets }) : null,
    { fused: source.settings.fused },
  );
}

/**
 * The checkpoint's tensors in `spec`'s parameter order, shape- and hash-checked; `field` names
 * the argument in errors.
 *
 * @example
 * ```ts
 * import type { HfModel } from "../../adapters/hf/mod.ts";
 * import type { EventStore } from "../../events/mod.ts";
 * import type { RunCheckpoint } from "./model-source.ts";
 * declare const store: EventStore; // holds the checkpoint's blob
 * declare const model: HfModel;
 * declare const source: RunCheckpoint;
 * const spec = checkpointSpec(model.config, source);
 * const tensors = await checkpointTensors(store, source, spec, "--model");
 * ```
 */
export async function checkpointTensors(
  store: EventStore,
  source: RunCheckpoint,
  spec: DecoderSpec,
  field: string,
): Promise<NamedTensor[]> {
  const stored = decodeSafetensors(
    await store.blobs.get(source.blob),
    `checkpoint ${source.label}`,
  );
  const tensors = trainableParams(spec).map((p) => {
    const t = stored.get(p.name);
    if (!t || t.shape.join("x") !== p.shape.join("x")) {
      throw new EvaluationInputError(
        field,
        source.label,
        `checkpoint tensor ${p.name} is ${
          t ? `[${t.shape}]` : "missing"
        }; the run's model needs [${p.shape}]`,
      );
    }
    return t;
  });
  const hash = hashTensors(tensors);
  if (hash !== source.parameterHash) {
    throw new EvaluationInputError(
      field,
      source.label,
      `the checkpoint's tensors hash to ${hash}, its checkpoint.saved event says ` +
        source.parameterHash,
    );
  }
  return tensors;
}
