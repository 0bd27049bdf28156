/**
 * The worker groups' weights on the inference servers of the openai rollout backend: each LoRA
 * group's adapter is written in PEFT's format (adapters/hf, as `deno task export-model --format
 * peft` writes it) to `rollout.adapter_dir/<group>-v<version>` and loaded on every endpoint
 * under that name with the engine's load route (engine-dialect.ts: vLLM's `POST
 * /v1/load_lora_adapter {lora_name, lora_path}`, SGLang's `POST /load_lora_adapter`); the
 * previous version is then unloaded (`/v1/unload_lora_adapter` or `/unload_lora_adapter`,
 * `{lora_name}`) and its folder removed.
 * Version v is the weights a step-v rollout samples: v0 the initial adapter, v(s + 1) after the
 * updates of step s. A frozen group is served by the base model's own name (its `model`). An
 * adapter names as its base the weights the run trains on: for `"embedded"`, the version the run
 * recorded (a resumed run of a since-replaced model: the archived directory).
 */
import { join, resolve } from "node:path";
import { saveLoraAdapter } from "../../../adapters/hf/mod.ts";
import { type EmbeddedVersion, loraAdapter, loraParamName } from "../../../adapters/model/mod.ts";
import { EndpointError, type EndpointPool, type OpenAIRollout } from "./endpoint-pool.ts";
import { engineDialect } from "./engine-dialect.ts";
import { type GroupPolicy, modelDirectory } from "./policy-pool.ts";

/** What publishing needs of a group. */
export type PublishedPolicy = Pick<
  GroupPolicy,
  "id" | "model" | "spec" | "trainableParameterCount" | "trainedTensors"
>;

/**
 * The adapter name of a group's weights at `version`.
 *
 * @example
 * ```ts
 * import { adapterName } from "./served-adapters.ts";
 *
 * adapterName("solver", 3); // "solver-v3"
 * ```
 */
export function adapterName(wg: string, version: number): string {
  return `${wg}-v${version}`;
}

/**
 * The served names of `groups` and how to publish new versions of their adapters.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../../config/mod.ts";
 * import { endpointPool } from "./endpoint-pool.ts";
 * import type { GroupPolicy } from "./policy-pool.ts";
 * import { servedAdapters } from "./served-adapters.ts";
 *
 * declare const config: NormalizedConfig; // its rollout backend openai
 * declare const groups: ReadonlyMap<string, GroupPolicy>; // "solver" a LoRA group
 * const pool = endpointPool(config.rollout!);
 * const served = servedAdapters(pool, config.rollout!, groups);
 * await served.publish(0);
 * served.modelOf("solver"); // "solver-v0"
 * ```
 */
export function servedAdapters(
  pool: EndpointPool,
  rollout: Pick<OpenAIRollout, "adapter_dir" | "engine">,
  groups: ReadonlyMap<string, PublishedPolicy>,
  /** The weights `"embedded"` stands for (TrainOptions.embedded); default the committed model. */
  embedded?: EmbeddedVersion,
) {
  const adapterDir = rollout.adapter_dir;
  const { loadPath, unloadPath } = engineDialect(rollout.engine);
  const current = new Map<string, number>();
  const lora = [...groups.values()].filter((p) => p.spec.lora !== null);

  async function write(policy: PublishedPolicy, dir: string): Promise<void> {
    const byName = new Map((await policy.trainedTensors()).map((t) => [t.name, t.data]));
    const base = policy.model === "embedded" && embedded ? embedded.dir : policy.model;
    const adapter = loraAdapter(policy.spec.config, policy.spec.lora!, (t) => ({
      a: byName.get(loraParamName(t.module, "A"))!,
      b: byName.get(loraParamName(t.module, "B"))!,
    }), resolve(modelDirectory(base)));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await saveLoraAdapter(dir, adapter);
  }

  async function onEvery(path: string, body: unknown, what: string): Promise<void> {
    await Promise.all(pool.endpoints.map(async (endpoint) => {
      try {
        await pool.postTo(endpoint, path, body);
      } catch (err) {
        if (!(err instanceof EndpointError)) throw err;
        throw new EndpointError(endpoint, path, `${what}: ${err.detail}`);
      }
    }));
  }

  return {
    /** The `model` a turn of `wg` asks for: its adapter's current name, or the base's. */
    modelOf(wg: string): string {
      const policy = groups.get(wg)!;
      const version = current.get(wg);
      return version === undefined ? policy.model : adapterName(wg, version);
    },
    /** The base model's served name (`model`) of `wg`. */
    baseOf(wg: string): string {
      return groups.get(wg)!.model;
    },
    /** Writes and loads every LoRA group's adapter as `version`, then unloads the previous. */
    async publish(version: number): Promise<void> {
      if (lora.length === 0) return;
      for (const policy of lora) {
        const name = adapterName(policy.id, version);
        if (current.get(policy.id) === version) continue;
        const dir = resolve(join(adapterDir!, name));
        await write(policy, dir);
        // A resumed run's servers may still hold this name from the interrupted run (vLLM refuses
        // to load a name twice): drop it first; an endpoint that is down fails the load below.
        await Promise.all(
          pool.endpoints.map((endpoint) =>
            pool.postTo(endpoint, unloadPath, { lora_name: name }).catch(() => {})
          ),
        );
        await onEvery(
          loadPath,
          { lora_name: name, lora_path: dir },
          `could not load adapter ${name} (${dir})`,
        );
        const previous = current.get(policy.id);
        current.set(policy.id, version);
        if (previous === undefined) continue;
        const old = adapterName(policy.id, previous);
        await onEvery(unloadPath, { lora_name: old }, `could not unload ${old}`);
        await Deno.remove(resolve(join(adapterDir!, old)), { recursive: true }).catch(() => {});
      }
    },
  };
}

/** The publisher of a run's adapters. */
export type ServedAdapters = ReturnType<typeof servedAdapters>;
