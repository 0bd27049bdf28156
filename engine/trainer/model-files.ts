/**
 * Checks that every agent's model can be found before a run is recorded: a mistyped path must
 * fail with a line naming the agent and the path, not leave a run behind in the store.
 */
import { join } from "node:path";
import { HfError, INDEX_FILE, readModelConfig, SINGLE_FILE } from "../../adapters/hf/mod.ts";

/** An agent's model is neither "embedded" nor an HF directory holding the files it loads from. */
export class ModelFilesError extends Error {
  override name = "ModelFilesError";
}

/**
 * Throws a ModelFilesError for the first agent whose model directory is absent, lacks
 * config.json, tokenizer.json or its safetensors weights (single-file or sharded), or whose
 * config.json is not one of a supported architecture. `given` names the flag the model came from
 * (`--model`), so the message points at what the user typed rather than at an agent.
 *
 * @example
 * ```ts
 * import type { NormalizedConfig } from "../config/mod.ts";
 * import { checkModelFiles } from "./model-files.ts";
 *
 * declare const config: NormalizedConfig;
 * await checkModelFiles(config.agents); // resolves, or throws a ModelFilesError naming the agent
 * ```
 */
export async function checkModelFiles(
  agents: readonly { readonly id: string; readonly model: string }[],
  given?: string,
): Promise<void> {
  for (const { id, model } of agents) {
    if (model === "embedded") continue;
    const who = given === undefined ? `agent ${id}: model` : given;
    if (!(await isDirectory(model))) {
      throw new ModelFilesError(
        `${who} ${model} is not a directory (give "embedded" or an HF checkpoint ` +
          `directory with config.json, tokenizer.json and ${SINGLE_FILE})`,
      );
    }
    const missing = [];
    if (!(await isFile(join(model, "config.json")))) missing.push("config.json");
    if (!(await isFile(join(model, "tokenizer.json")))) missing.push("tokenizer.json");
    if (!(await isFile(join(model, SINGLE_FILE))) && !(await isFile(join(model, INDEX_FILE)))) {
      missing.push(`${SINGLE_FILE} (or a sharded ${INDEX_FILE})`);
    }
    if (missing.length > 0) {
      throw new ModelFilesError(`${who} directory ${model} has no ${missing.join(", ")}`);
    }
    try {
      await readModelConfig(model);
    } catch (err) {
      // The config names the architecture, sizes and rope: refused now, not at the first step.
      if (err instanceof HfError) throw new ModelFilesError(`${who} ${model}: ${err.message}`);
      throw err;
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await statOrNull(path))?.isDirectory ?? false;
}

async function isFile(path: string): Promise<boolean> {
  return (await statOrNull(path))?.isFile ?? false;
}

/** Absence is an answer here; any other stat failure (permissions) propagates. */
async function statOrNull(path: string): Promise<Deno.FileInfo | null> {
  try {
    return await Deno.stat(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return null;
    throw err;
  }
}
