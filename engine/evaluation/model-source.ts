/**
 * What `--model` names: the embedded model, a local HF checkpoint directory, or a run's
 * checkpoint in the store (`RUN` for its latest, `RUN@STEP` for one step). A run's checkpoint is
 * one worker group's trained tensors (a LoRA adapter or full weights, safetensors) on top of the
 * base model that group named in the run's `run.started` config.
 */
import { z } from "zod";
import type { EventData, EventStore, NewEvent, StoredEvent } from "../../events/mod.ts";
import { FUSED_OPS, type FusedOp, recordedEmbeddedVersion } from "../../adapters/model/mod.ts";
import { trainableSchema } from "../config/mod.ts";
import { latestRunId, RunLogError } from "../trainer/run-log/mod.ts";
import { EvaluationInputError } from "./errors.ts";

/** What a worker group trained: LoRA (rank, alpha, targets), full weights, or nothing. */
export type Trainable = z.output<typeof trainableSchema>;

/**
 * The agents, sampling and fused decoder parts of a run's config: the prompts and sampling an
 * evaluation of its checkpoint starts from, and the graphs it must build to compute as the run did.
 */
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
  /** runtime.fused_ops: the decoder parts the run built as one node each. */
  readonly fused: readonly FusedOp[];
}

/** One worker group's checkpoint of a run: its trained tensors and what they sit on. */
export interface RunCheckpoint {
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
}

/** A model an evaluation can load. `model` is what the loaders take: "embedded" or a directory. */
export type ModelSource =
  | { readonly kind: "model-dir"; readonly label: string; readonly model: string }
  | RunCheckpoint;

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
  // Runs recorded before fused ops existed built none.
  runtime: z.object({ fused_ops: z.array(z.enum(FUSED_OPS)).default([]) }).default({
    fused_ops: [],
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
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore; // the runs' event store
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
  const found = await findRun(store, spec, "--model");
  if (found === null) {
    throw new EvaluationInputError(
      "--model",
      spec,
      `no such model directory, and the store ${store.target} has no run ${runOfSpec(spec)} ` +
        `(give a directory, "embedded", RUN, RUN@STEP or latest)`,
    );
  }
  return pickCheckpoint(
    await runCheckpoints(store, found.run, found.step, "--model"),
    options.workerGroup,
    ` to put it in every role, or evaluate the whole team in its own roles: deno task eval ${spec}`,
  );
}

/**
 * `RUN`, `RUN@STEP`, `latest` or `latest@STEP` as a run in the store and an optional step; null
 * when no such run exists. `field` names the argument in errors.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore;
 * await findRun(store, "latest@3", "RUN"); // { run: "smoke-20261202T1630-ab12cd", step: 3 }
 * ```
 */
export async function findRun(
  store: EventStore,
  spec: string,
  field: string,
): Promise<{ run: string; step: number | null } | null> {
  const exists = async (run: string) => run === "latest" || await store.streamVersion(run) > 0;
  const named = async (run: string, step: number | null) => ({
    run: run === "latest" ? await latestTrainingRun(store, field) : run,
    step,
  });
  if (await exists(spec)) return await named(spec, null);
  const at = spec.lastIndexOf("@");
  if (at <= 0 || !(await exists(spec.slice(0, at)))) return null;
  const stepText = spec.slice(at + 1);
  if (!/^\d+$/.test(stepText)) {
    throw new EvaluationInputError(field, spec, `step ${stepText} is not a step number`);
  }
  return await named(spec.slice(0, at), Number(stepText));
}

/**
 * The run part of `RUN@STEP` (the whole text without an `@`), for messages about a missing run.
 *
 * @example
 * ```ts
 * runOfSpec("smoke-1@3"); // "smoke-1"
 * ```
 */
export function runOfSpec(spec: string): string {
  const at = spec.lastIndexOf("@");
  return at > 0 ? spec.slice(0, at) : spec;
}

async function latestTrainingRun(store: EventStore, field: string): Promise<string> {
  try {
    return await latestRunId(store);
  } catch (err) {
    if (err instanceof RunLogError) throw new EvaluationInputError(field, "latest", err.message);
    throw err;
  }
}

/** Every checkpoint of one step of a run, with the run's recorded config. */
export interface RunCheckpoints {
  readonly run: string;
  readonly step: number;
  /** One per worker group that saved a checkpoint at `step`, in the order they were logged. */
  readonly checkpoints: readonly RunCheckpoint[];
  /** The run's worker groups; frozen ones have no checkpoint. */
  readonly workerGroups: readonly { id: string; model: string; trainable: Trainable }[];
  /** How the run's log ends so far: completed, failed, or neither (running, or its process died). */
  readonly ended: "completed" | "failed" | null;
}

/**
 * The checkpoints a run saved at `step` (null: its last checkpointed step, the final weights of a
 * completed run), one per trained worker group. `field` names the argument in errors.
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore;
 * const { step, checkpoints } = await runCheckpoints(store, "smoke-20261202", null, "RUN");
 * checkpoints.map((c) => c.workerGroup); // ["solver", "verifier"]
 * ```
 */
export async function runCheckpoints(
  store: EventStore,
  run: string,
  step: number | null,
  field: string,
): Promise<RunCheckpoints> {
  let config: unknown = null;
  const saved: EventData<"checkpoint.saved">[] = [];
  let embeddedSource: string | null = null;
  let ended: RunCheckpoints["ended"] = null;
  for await (const stored of store.readStream(run)) {
    const e = stored as StoredEvent<NewEvent>;
    if (e.type === "run.started") config = e.data.config;
    if (e.type === "checkpoint.saved") saved.push(e.data);
    if (e.type === "policy.initialized" && e.data.model === "embedded") {
      embeddedSource ??= e.data.source;
    }
    if (e.type === "run.completed") ended = "completed";
    if (e.type === "run.failed") ended = "failed";
    // A resumed run's steps follow its failure.
    if (e.type === "step.started") ended = null;
  }
  const parsed = recordedConfig.safeParse(config);
  if (!parsed.success) {
    throw new EvaluationInputError(
      field,
      run,
      "the run's run.started config has no worker_groups, agents and sampling of a training " +
        `run (${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message})`,
    );
  }
  if (saved.length === 0) {
    throw new EvaluationInputError(
      field,
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
      field,
      `${run}@${at}`,
      `the run has no checkpoint at step ${at}; its checkpoints are at steps ${steps.join(", ")}`,
    );
  }
  const settings = {
    agents: parsed.data.agents,
    sampling: parsed.data.sampling,
    fused: parsed.data.runtime.fused_ops,
  };
  // Trained on an embedded model since replaced: its checkpoint sits on the archived weights.
  const embedded = embeddedSource === null
    ? null
    : await recordedEmbeddedVersion(embeddedSource, run);
  const embeddedModel = embedded === null || embedded.current ? "embedded" : embedded.dir;
  const checkpoints = here.map((c): RunCheckpoint => {
    const wg = parsed.data.worker_groups.find((g) => g.id === c.workerGroup);
    if (!wg) {
      throw new EvaluationInputError(
        field,
        run,
        `checkpoint of worker group ${c.workerGroup} has no worker group in the run's config`,
      );
    }
    return {
      kind: "run-checkpoint",
      label: `${run}@${at}/${c.workerGroup}`,
      model: wg.model === "embedded" ? embeddedModel : wg.model,
      run,
      step: at,
      workerGroup: c.workerGroup,
      trainable: wg.trainable,
      blob: c.blob,
      parameterHash: c.parameterHash,
      settings,
    };
  });
  return { run, step: at, checkpoints, workerGroups: parsed.data.worker_groups, ended };
}

/**
 * The checkpoint of worker group `wanted` (optional when only one group trained); an
 * EvaluationInputError of `--worker-group` listing the groups otherwise (`hint` ends the message
 * when no group was named).
 *
 * @example
 * ```ts
 * import type { EventStore } from "../../events/mod.ts";
 * declare const store: EventStore;
 * pickCheckpoint(await runCheckpoints(store, "run", 1, "RUN"), "solver").label; // "run@1/solver"
 * ```
 */
export function pickCheckpoint(
  found: RunCheckpoints,
  wanted: string | undefined,
  hint = "",
): RunCheckpoint {
  const { checkpoints, run, step } = found;
  const chosen = wanted === undefined
    ? checkpoints.length === 1 ? checkpoints[0] : null
    : checkpoints.find((c) => c.workerGroup === wanted);
  if (chosen) return chosen;
  const groups = checkpoints.map((c) => c.workerGroup).join(", ");
  if (wanted === undefined) {
    throw new EvaluationInputError(
      "--worker-group",
      "(not given)",
      `run ${run} has checkpoints of worker groups ${groups} at step ${step}; choose one with ` +
        `--worker-group${hint}`,
    );
  }
  const frozen = found.workerGroups.find((g) => g.id === wanted && g.trainable.kind === "frozen");
  throw new EvaluationInputError(
    "--worker-group",
    wanted,
    `run ${run} has no checkpoint of worker group ${wanted} at step ${step}` +
      (frozen ? ` (it is frozen: it trained nothing; its model is ${frozen.model})` : "") +
      `; its checkpoints there are of ${groups}`,
  );
}
