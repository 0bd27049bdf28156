/**
 * `deno task export-model RUN|latest --worker-group WG --out DIR --format peft|merged`: writes a
 * worker group's trained weights from the run's last checkpoint (`RUN@STEP`: that step's) as
 * Hugging Face files. `peft` is a PEFT LoRA adapter (adapter_config.json +
 * adapter_model.safetensors, as `PeftModel.from_pretrained` loads it; the names and shapes PEFT
 * uses are cited in adapters/hf/peft-adapter.ts); `merged` is a full checkpoint (config.json,
 * model.safetensors, tokenizer files) with the adapter merged into the base, W + scale * B @ A
 * (adapters/hf/merge-lora.ts), or the full weights of a group trained without an adapter.
 * Checkpoint blobs already hold PEFT's layout (`<module>.lora_A.weight` [r, in], `lora_B.weight`
 * [out, r]: adapters/model/parameters.ts), so the adapter is written without any transpose.
 * The adapter names its base without a path of this machine (see base-model-reference.ts), and the
 * output says where the base weights are.
 */
import { resolve } from "node:path";
import { commandExitCode, defineCommand, storeOption, UsageError } from "../../events/cli/mod.ts";
import { openStore } from "../../events/mod.ts";
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  FLOAT_DTYPES,
  type FloatDtype,
  isFloatDtype,
  mergeLoraAdapter,
  saveHfModel,
  saveLoraAdapter,
} from "../../adapters/hf/mod.ts";
import { loraAdapter, loraParamName } from "../../adapters/model/mod.ts";
import {
  checkpointSpec,
  checkpointTensors,
  EvaluationInputError,
  findRun,
  loadBaseModel,
  pickCheckpoint,
  runCheckpoints,
  runOfSpec,
} from "../evaluation/mod.ts";
import { modelDirectory } from "../trainer/rollout/mod.ts";
import { baseModelReference } from "./base-model-reference.ts";

const FORMATS = ["peft", "merged"] as const;

const cli = defineCommand({
  name: "export-model",
  usage: "deno task export-model RUN|latest[@STEP] --out DIR --format peft|merged " +
    "[--worker-group WG] [--dtype F32|BF16|F16] [--store PATH|postgres://URL]",
  summary: "Writes a worker group's trained weights from a run's last checkpoint (RUN@STEP: " +
    "that step's) as Hugging Face files: peft, a PEFT LoRA adapter (adapter_config.json, " +
    "adapter_model.safetensors) for PeftModel.from_pretrained; merged, a full checkpoint " +
    "(config.json, model.safetensors, tokenizer files) with the adapter merged into the base, " +
    "or a full-weights group's weights.",
  options: {
    out: {
      type: "string",
      value: "DIR",
      path: true,
      output: true,
      help: "directory to write (created; must be new or empty)",
    },
    format: {
      type: "string",
      value: "peft|merged",
      help: "peft: the LoRA adapter; merged: a full HF checkpoint",
    },
    "worker-group": {
      type: "string",
      value: "WG",
      help: "which worker group's weights, for a run that trained several",
    },
    dtype: {
      type: "string",
      value: "F32|BF16|F16",
      default: "F32",
      help: "storage dtype of the tensors (default F32: the checkpoint's values exactly)",
    },
    ...storeOption,
  },
  examples: [
    "deno task export-model latest --worker-group solver --out solver-adapter --format peft",
    "deno task export-model RUN@4 --worker-group verifier --out verifier-hf --format merged",
  ],
});

async function checkOut(dir: string): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(dir);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return;
    throw err;
  }
  if (!info.isDirectory) throw new UsageError(`--out ${dir} is a file; name a new directory`);
  for await (const _ of Deno.readDir(dir)) {
    throw new UsageError(
      `--out ${dir} is not empty; name a new or empty directory (nothing is overwritten)`,
    );
  }
}

/** `deno task export-model ARGS` in this process; resolves to its exit code. */
export const main = (args: string[]): Promise<number> =>
  commandExitCode(cli.usage, async () => {
    const { values, positionals } = cli.parse(args);
    if (positionals.length !== 1) {
      throw new UsageError(`name one run (RUN, RUN@STEP or latest); got ${positionals.length}`);
    }
    if (values.out === undefined) throw new UsageError("--out DIR is required");
    const format = values.format as (typeof FORMATS)[number];
    if (!FORMATS.includes(format)) {
      throw new UsageError(
        `--format must be peft (the LoRA adapter) or merged (a full HF checkpoint); got ${
          values.format ?? "nothing"
        }`,
      );
    }
    if (!isFloatDtype(values.dtype)) {
      throw new UsageError(
        `--dtype must be one of ${FLOAT_DTYPES.join(", ")}; got ${values.dtype}`,
      );
    }
    const dtype: FloatDtype = values.dtype;
    const out = values.out;
    await checkOut(out);
    await using store = await openStore(values.store, { readOnly: true });
    try {
      const found = await findRun(store, positionals[0], "RUN");
      if (found === null) {
        throw new UsageError(
          `store ${store.target} has no run ${runOfSpec(positionals[0])} (give RUN, RUN@STEP or ` +
            "latest)",
        );
      }
      const checkpoints = await runCheckpoints(store, found.run, found.step, "RUN");
      const source = pickCheckpoint(checkpoints, values["worker-group"]);
      if (checkpoints.ended !== "completed") {
        console.error(
          `note: run ${found.run} ${checkpoints.ended ?? "has not finished"}; exporting its ` +
            `checkpoint of step ${source.step}`,
        );
      }
      const base = await loadBaseModel(source.model, "RUN", source.label);
      const baseDir = resolve(modelDirectory(source.model));
      const spec = checkpointSpec(base.config, source);
      const tensors = await checkpointTensors(store, source, spec, "RUN");
      let written: string[];
      let baseNote: string | null = null;
      if (spec.lora === null) {
        if (format === "peft") {
          throw new UsageError(
            `worker group ${source.workerGroup} of run ${found.run} trained its full weights, ` +
              "not a LoRA adapter; export it with --format merged",
          );
        }
        written = await saveHfModel(out, base.config, tensors, { dtype, tokenizerFrom: baseDir });
      } else {
        const byName = new Map(tensors.map((t) => [t.name, t.data]));
        const reference = baseModelReference(baseDir, resolve(out));
        const adapter = loraAdapter(base.config, spec.lora, (t) => ({
          a: byName.get(loraParamName(t.module, "A"))!,
          b: byName.get(loraParamName(t.module, "B"))!,
        }), reference.name);
        if (format === "peft") {
          const config = { ...adapter.config, baseRevision: reference.revision };
          await saveLoraAdapter(out, { ...adapter, config }, { dtype });
          written = [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE];
          baseNote = `base weights: ${baseDir}; ${ADAPTER_CONFIG_FILE} names them ` +
            (reference.revision === null
              ? `${reference.name} (their path from ${out})`
              : `${reference.name} at revision ${reference.revision} (their Hugging Face Hub repo)`);
        } else {
          written = await saveHfModel(out, base.config, mergeLoraAdapter(base.tensors, adapter), {
            dtype,
            tokenizerFrom: baseDir,
          });
        }
      }
      console.log(`exported ${source.label} (${format}, ${dtype}) to ${out}`);
      for (const file of written) console.log(`  ${file}`);
      if (baseNote !== null) console.log(baseNote);
    } catch (err) {
      if (err instanceof EvaluationInputError) throw new UsageError(err.message);
      throw err;
    }
  });

if (import.meta.main) Deno.exit(await main(Deno.args));
