/**
 * `train --set KEY=VALUE`: one config key changed on the command line, on a dotted path such as
 * `loss.kl_coef=0.01` or `agents.solver.trainable.rank=16`, without copying whole sections of a
 * config. The value is JSON when it parses as JSON (numbers, booleans, null, lists, objects),
 * else the text itself; the schema then validates the result as it validates a file.
 */
import { ConfigError } from "./errors.ts";

/** One parsed `--set`: the key path as typed, its segments, and the value. */
export interface SetOption {
  readonly key: string;
  readonly path: readonly string[];
  readonly value: unknown;
}

/** What a `--set` value must look like, quoted in every error about one. */
const SET_FORM = "KEY=VALUE on a dotted key path, e.g. loss.kl_coef=0.01 or " +
  "agents.solver.trainable.rank=16";

/**
 * Parses one `--set` argument.
 *
 * @example
 * ```ts
 * import { parseSetOption } from "./mod.ts";
 * parseSetOption("loss.kl_coef=0.01"); // { key: "loss.kl_coef", path: ["loss", "kl_coef"], value: 0.01 }
 * parseSetOption("estimator.kind=grpo").value; // "grpo"
 * ```
 */
export function parseSetOption(text: string): SetOption {
  const equals = text.indexOf("=");
  const key = equals < 0 ? text : text.slice(0, equals);
  const path = key.split(".");
  if (equals < 0 || path.some((segment) => segment === "")) {
    throw new ConfigError("command line", [{ key: "--set", value: text, allowed: SET_FORM }]);
  }
  return { key, path, value: jsonOrText(text.slice(equals + 1)) };
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * `config` with every `--set` applied in order: the value replaces what was at its path (an
 * object or list too, whole), and `null` removes the key so that its default applies again, as a
 * `null` does in a file that extends a preset. Objects missing on the way are created. Under
 * `agents`, the segment after it names agents: the agent with that id, else every agent with
 * that role. A path that names no agent, or goes through a value that is not an object, is a
 * ConfigError naming the `--set` and what exists.
 *
 * @example
 * ```ts
 * import { applySetOptions, parseSetOption, presetInput } from "./mod.ts";
 * applySetOptions(presetInput("smoke"), [parseSetOption("agents.solver.trainable.rank=16")]);
 * ```
 */
export function applySetOptions(config: unknown, sets: readonly SetOption[]): unknown {
  // A fresh copy is changed in place: the caller's config (a preset's, say) stays as it was.
  const out = structuredClone(config);
  for (const set of sets) {
    if (!isObject(out)) break; // a config that is no object is left for the schema to refuse
    for (const owner of owners(out, set)) assign(owner, set.path.at(-1)!, set.value);
  }
  return out;
}

/** The objects that hold the last key of `set.path` (several when a role names several agents). */
function owners(config: JsonObject, set: SetOption): JsonObject[] {
  const { path } = set;
  if (path[0] !== "agents" || path.length === 1) return descend([config], set, 0);
  if (path.length === 2) {
    throw new ConfigError("--set", [{
      key: set.key,
      value: set.value,
      allowed: `a key of the agents ${path[1]} names, e.g. agents.${path[1]}.model=DIR ` +
        "(--set agents=[...] replaces the whole list)",
    }]);
  }
  return descend(agentsNamed(config.agents, path[1], set), set, 2);
}

/** From `nodes` (at `set.path[from]`) down to the objects that hold the path's last key. */
function descend(nodes: JsonObject[], set: SetOption, from: number): JsonObject[] {
  for (let depth = from; depth < set.path.length - 1; depth++) {
    nodes = nodes.map((node) => objectAt(node, set, depth));
  }
  return nodes;
}

/** `node[set.path[depth]]`, created as `{}` when absent; a ConfigError when it is no object. */
function objectAt(node: JsonObject, set: SetOption, depth: number): JsonObject {
  const segment = set.path[depth];
  const child = Object.hasOwn(node, segment) ? node[segment] : undefined;
  if (child === undefined) {
    const created = {};
    assign(node, segment, created);
    return created;
  }
  if (isObject(child)) return child;
  const where = set.path.slice(0, depth + 1).join(".");
  const kind = Array.isArray(child) ? "a list" : `a ${typeof child}`;
  throw new ConfigError("--set", [{
    key: set.key,
    value: set.value,
    allowed: `a key under an object, but ${where} is ${kind}; set ${where} itself ` +
      `(--set ${where}=...)`,
  }]);
}

/** The agents `name` selects: the one with that id, else every one with that role. */
function agentsNamed(agents: unknown, name: string, set: SetOption): JsonObject[] {
  const entries = Array.isArray(agents) ? agents.filter(isObject) : [];
  const byId = entries.filter((agent) => agent.id === name);
  const selected = byId.length > 0 ? byId : entries.filter((agent) => agent.role === name);
  if (selected.length > 0) return selected;
  const list = (key: string) => [...new Set(entries.map((agent) => String(agent[key])))].join(", ");
  throw new ConfigError("--set", [{
    key: set.key,
    value: set.value,
    allowed: `agents.<id or role>.<key>, and no agent has the id or role ${name} ` +
      `(ids: ${list("id") || "none"}; roles: ${list("role") || "none"})`,
  }]);
}

/** Sets `node[key]` as an own key (`__proto__` included) or, for null, removes it. */
function assign(node: JsonObject, key: string, value: unknown): void {
  if (value === null) delete node[key];
  else {Object.defineProperty(node, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });}
}
