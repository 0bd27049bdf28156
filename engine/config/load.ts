/**
 * Where a run's config comes from: a preset or a JSON file (which may `"extends"` a preset, its
 * agents merged by id or role: extendConfig), then `--set` key paths, then the other command-line
 * overrides, layered with mergeConfig and validated once at the end.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { readRegularTextFile } from "../../events/files/mod.ts";
import { MAX_CONFIG_DEPTH } from "./bounds.ts";
import { ConfigError } from "./errors.ts";
import {
  extendConfig,
  mergeConfig,
  type ReplacedVariant,
  replacedVariantWarning,
} from "./merge.ts";
import { type NormalizedConfig, parseConfig } from "./normalize.ts";
import { DEFAULT_PRESET, presetInput } from "./presets.ts";
import { DEVICES } from "./schema.ts";
import { applySetOptions, type SetOption } from "./set-option.ts";

/** The sources of one run's config; all optional (no file and no preset: the default preset). */
export interface ConfigSources {
  readonly file?: string;
  readonly preset?: string;
  /**
   * Every agent's model (`train --model`): the common case of one base model for the whole team,
   * applied after the file or preset and the overrides.
   */
  readonly model?: string;
  /** `train --set KEY=VALUE`s (parseSetOption), applied in order after the file or preset. */
  readonly sets?: readonly SetOption[];
  /** Already-structured overrides, e.g. from {@link overridesFromFlags}; applied after `sets`. */
  readonly overrides?: Record<string, unknown>;
  /**
   * Hears what the layering did that a user may not mean: a file's section of another `kind`
   * replacing the preset's, with keys the preset had set (replacedVariantWarning).
   */
  readonly onWarning?: (message: string) => void;
}

/** The largest config file read: a config is a few KiB; a device or FIFO is refused outright. */
const CONFIG_MAX_BYTES = 16 * 1024 * 1024;

async function readJson(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readRegularTextFile(file, { maxBytes: CONFIG_MAX_BYTES });
  } catch (e) {
    throw new ConfigError(file, [{
      key: "--config",
      value: file,
      allowed: `a readable file (${(e as Error).message})`,
    }]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(file, [{
      key: "(file)",
      value: file,
      allowed: `JSON text (${(e as Error).message})`,
    }]);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigError(file, [{ key: "(file)", value, allowed: "a JSON object" }]);
  }
  checkDepth(value, file);
  return value as Record<string, unknown>;
}

/** A ConfigError from `source` when `value` nests deeper than MAX_CONFIG_DEPTH. */
function checkDepth(value: unknown, source: string): void {
  const tooDeep = pathBelowDepth(value, MAX_CONFIG_DEPTH);
  if (tooDeep !== null) {
    // The key path is cut short: it is as long as the nesting.
    const shown = tooDeep.length > 6 ? [...tooDeep.slice(0, 6), "..."] : tooDeep;
    throw new ConfigError(source, [{
      key: shown.join("."),
      value: `(objects and arrays nested more than ${MAX_CONFIG_DEPTH} levels deep)`,
      allowed: `at most ${MAX_CONFIG_DEPTH} levels of nesting`,
    }]);
  }
}

/**
 * The key path of the first object or array nested more than `limit` levels deep in `value`,
 * or null; walked with a stack of its own, so the depth it measures cannot overflow the call
 * stack.
 */
function pathBelowDepth(value: unknown, limit: number): string[] | null {
  const pending: { value: unknown; path: string[] }[] = [{ value, path: [] }];
  while (pending.length > 0) {
    const { value: node, path } = pending.pop()!;
    if (node === null || typeof node !== "object") continue;
    if (path.length >= limit) return path;
    for (const [key, child] of Object.entries(node)) {
      pending.push({ value: child, path: [...path, Array.isArray(node) ? `[${key}]` : key] });
    }
  }
  return null;
}

/**
 * The file's config with a relative `workflow.module` made absolute against the file's folder,
 * so the module is found from any working directory and the recorded config names it wherever
 * the run is resumed or replayed. Anything but a string path is left for the schema to report.
 */
function withModuleFrom(
  file: string,
  config: Record<string, unknown>,
): Record<string, unknown> {
  const workflow = config.workflow as Record<string, unknown> | undefined;
  const module = workflow?.module;
  if (typeof module !== "string" || module === "" || isAbsolute(module)) return config;
  return { ...config, workflow: { ...workflow, module: resolve(dirname(file), module) } };
}

/**
 * Resolves, merges and validates a run's config.
 *
 * @example
 * ```ts
 * const config = await loadConfig({ preset: "smoke", overrides: { seed: 3 } });
 * ```
 */
export async function loadConfig(sources: ConfigSources = {}): Promise<NormalizedConfig> {
  const { file, preset, sets = [], overrides = {} } = sources;
  if (file !== undefined && preset !== undefined) {
    throw new ConfigError("command line", [{
      key: "--preset",
      value: preset,
      allowed: "either --config or --preset, not both",
    }]);
  }
  let layered: unknown;
  let source: string;
  const replaced: (ReplacedVariant & { readonly base: string })[] = [];
  if (file !== undefined) {
    const { extends: base, ...rest } = await readJson(file);
    if (base !== undefined && typeof base !== "string") {
      throw new ConfigError(file, [{ key: "extends", value: base, allowed: "a preset name" }]);
    }
    const own = withModuleFrom(file, rest);
    layered = base === undefined ? own : extendConfig(
      presetInput(base),
      own,
      (r) => replaced.push({ ...r, base: `preset ${base}` }),
    );
    source = file;
  } else {
    const name = preset ?? DEFAULT_PRESET;
    layered = presetInput(name);
    source = `preset ${name}`;
  }
  if (sets.length > 0) {
    layered = applySetOptions(layered, sets);
    checkDepth(layered, "--set");
    source = `${source} with --set`;
  }
  const config = parseConfig(withModel(mergeConfig(layered, overrides), sources.model), source);
  for (const r of replaced) {
    const lost = lostKeys(config, r);
    if (lost !== undefined) sources.onWarning?.(`${file}: ${replacedVariantWarning(lost, r.base)}`);
  }
  return config;
}

/**
 * The part of a replaced section's dropped keys whose value the run does not have after all
 * (a dropped key whose default is the same value loses nothing); undefined when none.
 */
function lostKeys(
  config: NormalizedConfig,
  replaced: ReplacedVariant,
): ReplacedVariant | undefined {
  const section = replaced.path.split(".").reduce<unknown>(
    (at, key) => (at as Record<string, unknown> | undefined)?.[key],
    config,
  ) as Record<string, unknown> | undefined;
  const dropped = Object.fromEntries(
    Object.entries(replaced.dropped).filter(([key, value]) =>
      JSON.stringify(section?.[key]) !== JSON.stringify(value)
    ),
  );
  return Object.keys(dropped).length === 0 ? undefined : { ...replaced, dropped };
}

/** Sets every agent's model; a config without an agent list is left for the schema to refuse. */
function withModel(config: unknown, model: string | undefined): unknown {
  if (model === undefined) return config;
  const agents = (config as { agents?: unknown }).agents;
  if (!Array.isArray(agents)) return config;
  return {
    ...(config as Record<string, unknown>),
    agents: agents.map((a) => a !== null && typeof a === "object" ? { ...a, model } : a),
  };
}

/** The train command's flags that override config keys, as given on the command line. */
export interface OverrideFlags {
  readonly seed?: string;
  readonly steps?: string;
  readonly device?: string;
  readonly store?: string;
}

function integerFlag(flag: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n)) {
    throw new ConfigError("command line", [{
      key: flag,
      value: text,
      allowed: "a non-negative integer",
    }]);
  }
  return n;
}

/**
 * Turns `--seed/--steps/--device/--store` into config overrides (seed, steps, runtime.device,
 * store); the schema still validates the values.
 *
 * @example
 * ```ts
 * overridesFromFlags({ seed: "7", device: "cpu" }); // { seed: 7, runtime: { device: "cpu" } }
 * ```
 */
export function overridesFromFlags(flags: OverrideFlags): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (flags.seed !== undefined) out.seed = integerFlag("--seed", flags.seed);
  if (flags.steps !== undefined) out.steps = integerFlag("--steps", flags.steps);
  if (flags.device !== undefined) {
    if (!(DEVICES as readonly string[]).includes(flags.device)) {
      throw new ConfigError("command line", [{
        key: "--device",
        value: flags.device,
        allowed: `one of ${DEVICES.join(", ")}`,
      }]);
    }
    out.runtime = { device: flags.device };
  }
  if (flags.store !== undefined) out.store = flags.store;
  return out;
}
