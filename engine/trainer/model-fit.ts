/**
 * Checks that every agent's model fits the run before the run is recorded: its context leaves
 * room for a prompt once `sampling.max_tokens` new tokens are reserved, `runtime.fused_ops` can
 * be built for it, and its tokenizer turns the task's text into tokens. A failing one would
 * otherwise be found mid-run ("prompt: is empty", a graph refused as the first rollout builds
 * it), or not at all: a tokenizer with an empty vocabulary trains on prompts of special tokens
 * only. Reads config.json and tokenizer.json; the weights are checked as they load
 * (adapters/hf/load-model.ts).
 */
import { loadTokenizer, readModelConfig } from "../../adapters/hf/mod.ts";
import { EMBEDDED_MODEL_DIR, fusedOpsMisfit } from "../../adapters/model/mod.ts";
import type { NormalizedConfig } from "../config/mod.ts";
import type { TaskSource } from "./rollout/mod.ts";

/** A model that cannot serve the run as configured; the message names the key or file to fix. */
export class ModelFitError extends Error {
  override name = "ModelFitError";
}

/** Characters of a question quoted in an error. */
const QUOTED = 60;

/** How the messages of checkModelFit name what the user gave. */
export interface ModelFitNames {
  /** the flag the models came from (`--model`); default: the config's agents */
  readonly given?: string;
  /** what sets the new tokens per turn (default `sampling.max_tokens`, eval: `--max-tokens`) */
  readonly maxTokens?: string;
}

/**
 * Throws a ModelFitError for the first model whose context is not longer than
 * `sampling.max_tokens`, that `runtime.fused_ops` does not fit (fusedOpsMisfit), or whose
 * tokenizer encodes the first problem of each split (and of each benchmark) to no tokens.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import { checkModelFit } from "./model-fit.ts";
 * import { taskSource } from "./rollout/mod.ts";
 *
 * declare const config: NormalizedConfig;
 * await checkModelFit(config, await taskSource(config)); // resolves, or throws a ModelFitError
 * ```
 */
export async function checkModelFit(
  config: NormalizedConfig,
  tasks: TaskSource,
  names: ModelFitNames = {},
): Promise<void> {
  const { given, maxTokens: maxTokensKey = "sampling.max_tokens" } = names;
  const maxTokens = config.sampling.max_tokens;
  const texts = [tasks.train, tasks.validation, tasks.test, ...tasks.benchmarks.values()]
    .flatMap((questions) => questions.slice(0, 1).map((q) => q.problem));
  for (const model of new Set(config.agents.map((a) => a.model))) {
    const dir = model === "embedded" ? EMBEDDED_MODEL_DIR.pathname : model;
    const who = given === undefined ? `model ${model}` : `${given} ${model}`;
    const modelConfig = await readModelConfig(dir);
    const context = modelConfig.maxPositionEmbeddings;
    // A turn's prompt keeps its last `context - max_tokens` tokens (speaker.ts turnPrompt).
    if (maxTokens >= context) {
      throw new ModelFitError(
        `${maxTokensKey} = ${maxTokens} leaves no room for a prompt in the context of ` +
          `${who} (max_position_embeddings ${context}); set ${maxTokensKey} to at most ` +
          `${context - 1}`,
      );
    }
    const misfit = fusedOpsMisfit(modelConfig, config.runtime.fused_ops);
    if (misfit !== null) throw new ModelFitError(`runtime.fused_ops, for ${who}: ${misfit}`);
    const tokenizer = await loadTokenizer(dir);
    const lost = texts.find((text) =>
      tokenizer.encode(text, { addSpecialTokens: false }).length === 0
    );
    if (lost !== undefined) {
      throw new ModelFitError(
        `the tokenizer.json of ${who} encodes the task's text ` +
          `${JSON.stringify(lost.slice(0, QUOTED))} to no tokens: its vocabulary is too small ` +
          "for the task; give the model the tokenizer.json it was trained with",
      );
    }
  }
}
