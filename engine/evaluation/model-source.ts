/**
 * What `--model` names: the embedded model, a local HF checkpoint directory, or a run's
 * checkpoint in the store (`RUN` for its latest, `RUN@STEP` for one step). A run's checkpoint is
 * one worker group's trained tensors (a LoRA adapter or full weights, safetensors) on top of the
 * base model that group named in the run's `run.started` config.
 */
import { z } from "zod";
import type { EventData, EventStore, NewEvent, StoredEvent } from "../../events/mod.ts";
import { trainableSchema } from "../config/schema.ts";
import { EvaluationInputError } from "./errors.ts";

/** What a worker group trained: LoRA (rank, alpha, targets), full weights, or nothing. */
export type Trainable = z.output<typeof trainableSchema>;

/** The agents and sampling of a run's config, for prompts and sampling settings. */
export interface RunSettings {
  readonly agents: readonly {
    readonly id: string;
    readonly role: string;
    readonly prompt: string;
  }[];
  readonly sampling: {
    readonly temperature: number;
    readonly top_p: number;
    readonly max_tokens: number;
    readonly stop: readonly string[];
  };
}

/** A model an evaluation can load. `model` is what the loaders take: "embedded" or a directory. */
export type ModelSource =
  | { readonly kind: "model-dir"; readonly label: string; readonly model: string }
  | {
    readonly kind: "run-checkpoint";
    /** `RUN@STEP/WG`: names the checkpoint in events and tables. */
    readonly label: string;
    /** The base model the worker group was trained on. */
    readonly model: string;
    readonly run: string;
    readonly step: number;
    readonly workerGroup: string;
    readonly trainable: Trainable;
    readonly blob: string;
    readonly parameterHash: string;
    readonly settings: RunSettings;
  };

const recordedConfig = z.object({
  worker_groups: z.array(
    z.object({ id: z.string(), model: z.string(), trainable: trainableSchema }),
  ),
  agents: z.array(z.object({ id: z.string(), role: z.string(), prompt: z.string() })),
  sampling: z.object({
    temperature: z.number(),
    top_p: z.number(),
    max_tokens: z.number().int(),
    stop: z.array(z.string()),
  }),
});

async function isDirectory(path: string): Promise<boolean | null> {
  try {
    return (await Deno.stat(path)).isDirectory;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}

/**
 * Resolves `--model`. A directory wins over a run of the same name; `embedded` is the embedded
 * model. `workerGroup` picks the checkpoint of a run that trained several groups.
 *
 * @example
 * ```ts
 * const source = await resolveModelSource(store, "smoke-20261202@1", { workerGroup: "solver" });
 * source.kind; // "run-checkpoint"
 * ```
 */
export async function resolveModelSource(
  store: EventStore,
  spec: string,
  options: { workerGroup?: string } = {},
): Promise<ModelSource> {
  const dir = spec === "embedded" || await isDirectory(spec);
  if (dir === true) {
    if (options.workerGroup !== undefined) {
      throw new EvaluationInputError(
        "--worker-group",
        options.workerGroup,
        `only picks among a run's checkpoints; --model ${spec} is a model directory`,
      );
    }
    return { kind: "model-dir", label: spec, model: spec };
  }
  if (dir === false) {
    throw new EvaluationInputError(
      "--model",
      spec,
      "is a file; expected an HF checkpoint directory (config.json, *.safetensors, " +
        "tokenizer.json) or a run id (RUN or RUN@STEP)",
    );
  }
  if (await store.streamVersion(spec) > 0) return await runCheckpoint(store, spec, null, options);
  const at = spec.lastIndexOf("@");
  if (at > 0 && await store.streamVersion(spec.slice(0, at)) > 0) {
    const stepText = spec.slice(at + 1);
    if (!/^\d+$/.test(stepText)) {
      throw new EvaluationInputError("--model", spec, `step ${stepText} is not a step number`);
    }
    return await runCheckpoint(store, spec.slice(0, at), Number(stepText), options);
  }
  throw new EvaluationInputError(
    "--model",
    spec,
    `no such model directory, and the store ${store.target} has no run ${
      at > 0 ? spec.slice(0, at) : spec
    } (give a directory, "embedded", RUN or RUN@STEP)`,
  );
}

async function runCheckpoint(
  store: EventStore,
  run: string,
  step: number | null,
  options: { workerGroup?: string },
): Promise<ModelSource> {
  let config: unknown = null;
  const saved: EventData<"checkpoint.saved">[] = [];
  for await (const stored of store.readStream(run)) {
    const e = stored as StoredEvent<NewEvent>;
    if (e.type === "run.started") config = e.data.config;
    if (e.type === "checkpoint.saved") saved.push(e.data);
  }
  const parsed = recordedConfig.safeParse(config);
  if (!parsed.success) {
    throw new EvaluationInputError(
      "--model",
      run,
      "the run's run.started config has no worker_groups, agents and sampling of a training " +
        `run (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
    );
  }
  if (saved.length === 0) {
    throw new EvaluationInputError(
      "--model",
      run,
      "the run saved no checkpoint (all its worker groups are frozen, or it stopped before " +
        "its first checkpoint)",
    );
  }
  const steps = [...new Set(saved.map((c) => c.step))].sort((a, b) => a - b);
  const at = step ?? steps[steps.length - 1];
  const here = saved.filter((c) => c.step === at);
  if (here.length === 0) {
    throw new EvaluationInputError(
      "--model",
      `${run}@${at}`,
      `the run has no checkpoint at step ${at}; its checkpoints are at steps ${steps.join(", ")}`,
    );
  }
  const groups = here.map((c) => c.workerGroup);
  const wanted = options.workerGroup;
  const chosen = wanted === undefined
    ? here.length === 1 ? here[0] : null
    : here.find((c) => c.workerGroup === wanted);
  if (!chosen) {
    throw new EvaluationInputError(
      "--worker-group",
      wanted ?? "(not given)",
      `run ${run} has checkpoints of worker groups ${groups.join(", ")} at step ${at}; ` +
        "choose one with --worker-group",
    );
  }
  const wg = parsed.data.worker_groups.find((g) => g.id === chosen.workerGroup);
  if (!wg) {
    throw new EvaluationInputError(
      "--model",
      run,
      `checkpoint of worker group ${chosen.workerGroup} has no worker group in the run's config`,
    );
  }
  return {
    kind: "run-checkpoint",
    label: `${run}@${at}/${chosen.workerGroup}`,
    model: wg.model,
    run,
    step: at,
    workerGroup: chosen.workerGroup,
    trainable: wg.trainable,
    blob: chosen.blob,
    parameterHash: chosen.parameterHash,
    settings: { agents: parsed.data.agents, sampling: parsed.data.sampling },
  };
}
