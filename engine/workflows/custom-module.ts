/**
 * A custom workflow module (`workflow.module`): loaded by path and identified by the SHA-256 of
 * its source, which `run.started` records so that replay can name an edited module as the cause
 * of a divergence. Only the module file itself is hashed; files it imports are covered by the
 * run's code version when they live in the repository.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { sha256Hex } from "../../events/mod.ts";
import type { ExperimentConfig } from "../config/mod.ts";
import type { Workflow, WorkflowAgent } from "./types.ts";

/**
 * A custom workflow module's default export: builds the workflow from the config's agents (in
 * config order) and its `workflow.params`.
 */
export type WorkflowFactory = (
  agents: readonly WorkflowAgent[],
  params: Readonly<Record<string, unknown>>,
) => Workflow;

/** The workflow cannot be built from the config (missing retriever, bad custom module). */
export class WorkflowConfigError extends Error {
  override name = "WorkflowConfigError";
}

/** What `run.started` records of a custom workflow's module. */
export interface WorkflowModuleSource {
  /** the absolute path it was loaded from */
  readonly path: string;
  /** SHA-256 (hex) of its bytes */
  readonly sha256: string;
}

/**
 * The module's absolute path. A config file's relative `workflow.module` was already made
 * absolute against the file's folder when it was loaded; a relative one here (a config built in
 * code) is taken against the working directory.
 */
function modulePath(module: string): string {
  return resolve(module);
}

/**
 * Imports the module and returns its default export, checked to be a function.
 *
 * @example
 * ```ts
 * import { loadWorkflowFactory } from "./custom-module.ts";
 * import type { WorkflowAgent } from "./types.ts";
 * declare const agents: readonly WorkflowAgent[];
 * const factory = await loadWorkflowFactory("/abs/planner-executors.ts");
 * const workflow = factory(agents, { rounds: 2 });
 * ```
 */
export async function loadWorkflowFactory(module: string): Promise<WorkflowFactory> {
  const path = modulePath(module);
  const loaded = await import(pathToFileURL(path).href).catch((err: Error) => {
    throw new WorkflowConfigError(`workflow.module ${path} cannot be loaded: ${err.message}`);
  });
  if (typeof loaded.default !== "function") {
    throw new WorkflowConfigError(
      `workflow.module ${path} must default-export a function (agents, params) => Workflow`,
    );
  }
  return loaded.default as WorkflowFactory;
}

/**
 * The path and source hash of a custom workflow's module; null for a built-in workflow.
 *
 * @example
 * ```ts
 * import type { ExperimentConfig } from "../config/mod.ts";
 * import { workflowModuleSource } from "./custom-module.ts";
 * declare const config: ExperimentConfig;
 * await workflowModuleSource(config.workflow); // { path: "/abs/flow.ts", sha256: "3f2a..." }
 * ```
 */
export async function workflowModuleSource(
  workflow: ExperimentConfig["workflow"],
): Promise<WorkflowModuleSource | null> {
  if (workflow.kind !== "custom") return null;
  const path = modulePath(workflow.module);
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(path);
  } catch (err) {
    throw new WorkflowConfigError(
      `workflow.module ${path} cannot be read: ${(err as Error).message}`,
    );
  }
  return { path, sha256: sha256Hex(bytes) };
}
