/**
 * The same generations in-process, as the server's contract says they are made: the embedded
 * model (or an adapter on it) on a 1-thread cpu runtime, each choice sampled from the keyed
 * stream `(seed, "serve:sample-token", sample = choice index)` at draw index = token position,
 * logprobs of softmax(logits / T). Written here from the contract, not from the server's code.
 */
import { loadLoraAdapter, type LoraAdapter } from "../../adapters/hf/mod.ts";
import {
  adapterHostFeeds,
  createGenerator,
  decoderSpec,
  type FusedOp,
  type GeneratedRow,
  loadEmbeddedModel,
  loraSpec,
  uploadBase,
} from "../../adapters/model/mod.ts";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { type DrawCoordinates, randomStream, sampleLogits } from "../../engine/random/mod.ts";

/** One batch of the in-process generator. */
export interface InProcessBatch {
  readonly prompts: readonly (readonly number[])[];
  /** The keyed-draw sample coordinate of each row. */
  readonly samples: readonly number[];
  readonly seed: number;
  readonly maxTokens: number;
  readonly temperature: number;
  readonly topP: number;
  /** Each row's draw coordinates instead of the server's `(seed, serve:sample-token, sample)`. */
  readonly draws?: readonly DrawCoordinates[];
  /** A PEFT adapter folder to generate with (default: the base). */
  readonly adapterDir?: string;
  /** Decoder parts built as one node each (serve --fused); default none. */
  readonly fused?: readonly FusedOp[];
  /** Go on past EOS to maxTokens (the server's ignore_eos). */
  readonly ignoreEos?: boolean;
  /** Hears the seconds `generate` took (the model loaded and compiled before). */
  readonly timed?: (seconds: number) => void;
}

/**
 * Generates `batch` in this process on the embedded model.
 *
 * @example
 * ```ts
 * import { inProcess } from "./in-process.ts";
 *
 * declare const ids: number[]; // the prompt's token ids
 * const [row] = await inProcess({
 *   prompts: [ids],
 *   samples: [0],
 *   seed: 7,
 *   maxTokens: 8,
 *   temperature: 1,
 *   topP: 1,
 * });
 * row.tokens; // the token ids `deno task serve` answers with for seed 7 and n 1
 * ```
 */
export async function inProcess(batch: InProcessBatch): Promise<GeneratedRow[]> {
  const model = await loadEmbeddedModel();
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    let adapter: LoraAdapter | null = null;
    if (batch.adapterDir) adapter = await loadLoraAdapter(batch.adapterDir, model.config);
    const c = adapter?.config;
    const spec = decoderSpec(
      model.config,
      c
        ? loraSpec({
          rank: c.r,
          alpha: c.alpha,
          targetModules: c.targetModules,
          useRslora: c.useRslora,
        })
        : null,
      { fused: batch.fused ?? [] },
    );
    const base = uploadBase(runtime, spec, model.tensors);
    const generator = await createGenerator(runtime, spec);
    const streams = batch.draws?.map(randomStream) ??
      batch.samples.map((sample) =>
        randomStream({ seed: batch.seed, purpose: "serve:sample-token", sample })
      );
    const tokenizer = model.tokenizer!;
    const started = performance.now();
    const rows = await generator.generate(
      { ...base.feeds, ...(adapter ? adapterHostFeeds(spec, adapter) : {}) },
      {
        prompts: batch.prompts,
        maxTokens: batch.maxTokens,
        temperature: batch.temperature,
        choose: (logits, row, index) =>
          sampleLogits(streams[row], index, logits, {
            temperature: batch.temperature,
            topP: batch.topP,
          }),
        stopTokenIds: batch.ignoreEos ? [] : tokenizer.eosTokenIds,
        padTokenId: tokenizer.padTokenId ?? 0,
      },
    );
    batch.timed?.((performance.now() - started) / 1000);
    await generator.release();
    base.release();
    return rows;
  } finally {
    await runtime.close();
  }
}
