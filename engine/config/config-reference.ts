/**
 * docs/CONFIG.md, generated from the zod schema itself (its JSON Schema, input side): every key
 * with its type, default and the one line of meaning its `.describe()` gives. Generating it keeps
 * the reference true: a key added without a description fails here, and a test compares the file.
 *
 * @example
 * ```ts
 * await Deno.writeTextFile("docs/CONFIG.md", configReference());
 * ```
 */
import { z } from "zod";
import { experimentConfigSchema } from "./schema.ts";
import { PRESET_REFERENCES, PRESET_SUMMARIES, presetNames } from "./presets.ts";

/** The part of JSON Schema that z.toJSONSchema writes for this schema. */
interface JsonSchema {
  type?: string;
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  $ref?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string;
}

/** A key of the config the schema has no description for. */
export class UndescribedKeyError extends Error {
  override name = "UndescribedKeyError";
  constructor(readonly key: string) {
    super(`config key ${key} has no description: add .describe("...") in engine/config/schema.ts`);
  }
}

interface Row {
  readonly key: string;
  readonly type: string;
  readonly fallback: string;
  readonly meaning: string;
}

const code = (value: unknown) => `\`${JSON.stringify(value)}\``;

function bounds(s: JsonSchema): string {
  const parts = [
    s.exclusiveMinimum !== undefined ? `> ${s.exclusiveMinimum}` : "",
    s.minimum !== undefined ? `≥ ${s.minimum}` : "",
    s.exclusiveMaximum !== undefined ? `< ${s.exclusiveMaximum}` : "",
    // 2^53 - 1 is the integers' own limit, not a bound a user chose.
    s.maximum !== undefined && s.maximum !== Number.MAX_SAFE_INTEGER ? `≤ ${s.maximum}` : "",
  ].filter(Boolean);
  return parts.length > 0 ? ` ${parts.join(", ")}` : "";
}

function typeText(s: JsonSchema): string {
  if (s.const !== undefined) return code(s.const);
  if (s.enum) return s.enum.map(code).join(" or ");
  if (s.anyOf) return s.anyOf.map(typeText).join(", or ");
  if (s.$ref) return "any JSON value";
  if (s.type === "integer" || s.type === "number") return `${s.type}${bounds(s)}`;
  if (s.type === "string") {
    if (s.pattern) return `string matching \`${s.pattern}\``;
    return s.minLength ? "non-empty string" : "string";
  }
  if (s.type === "array" && s.items) {
    const count = s.maxItems !== undefined
      ? ` (${s.minItems ?? 0} to ${s.maxItems})`
      : s.minItems
      ? ` (at least ${s.minItems})`
      : "";
    return `array${count} of ${s.items.properties ? "objects" : typeText(s.items)}`;
  }
  if (s.type === "object" && typeof s.additionalProperties === "object") {
    const key = s.propertyNames ? typeText(s.propertyNames) : "string";
    return `map from ${key} to ${typeText(s.additionalProperties)}`;
  }
  if (s.oneOf) return "object, one of the kinds below";
  return s.type ?? "any";
}

function fallbackText(s: JsonSchema, required: boolean): string {
  if (s.default !== undefined) return code(s.default);
  return required ? "required" : "none";
}

function meaning(key: string, s: JsonSchema, variant: string | undefined): string {
  if (!s.description) throw new UndescribedKeyError(key);
  return variant ? `(${variant}) ${s.description}` : s.description;
}

function rows(key: string, s: JsonSchema, required: boolean, variant?: string): Row[] {
  const own: Row = {
    key,
    type: typeText(s),
    fallback: fallbackText(s, required),
    meaning: meaning(key, s, variant),
  };
  if (s.oneOf) {
    return [own, ...s.oneOf.flatMap((v) => fields(key, v, `kind ${v.properties?.kind?.const}`))];
  }
  if (s.properties) return [own, ...fields(key, s, variant)];
  if (s.type === "array" && s.items?.properties) return [own, ...fields(`${key}[]`, s.items)];
  return [own];
}

function fields(prefix: string, s: JsonSchema, variant?: string): Row[] {
  const required = new Set(s.required ?? []);
  return Object.entries(s.properties ?? {}).flatMap(([name, child]) =>
    rows(prefix ? `${prefix}.${name}` : name, child, required.has(name), variant)
  );
}

const cell = (text: string) => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/**
 * The reference as Markdown: one table row per key, nested keys dotted (`agents[].optimizer.lr`).
 * Throws UndescribedKeyError for a key without `.describe()`.
 *
 * @example
 * ```ts
 * configReference().includes("| `seed` |"); // true
 * ```
 */
export function configReference(config: z.ZodType = experimentConfigSchema): string {
  const schema = z.toJSONSchema(config, { io: "input" }) as JsonSchema;
  const table = fields("", schema).map((r) =>
    `| \`${r.key}\` | ${cell(r.type)} | ${cell(r.fallback)} | ${cell(r.meaning)} |`
  );
  return [
    "# Experiment config reference",
    "",
    "<!-- Generated from engine/config/schema.ts by `deno task docs`; edit the schema's",
    "     .describe() texts, not this file. tests/cli/config-docs_test.ts checks it. -->",
    "",
    "An experiment config is a JSON file (`deno task train --config FILE`); keys are snake_case.",
    'A key with a default may be left out; `"extends": "PRESET"` starts from a preset',
    "(`deno task train --help` lists them): objects merge key by key, `null` removes a key (its",
    "default applies again), other lists replace the preset's, and `agents` merge: an entry with",
    "an `id` into the preset's agent of that id, one without into every agent of its `role`, one",
    'matching none is appended; `"agents": {"replace": [...]}` replaces the list (to drop agents).',
    "On the command line, `--set KEY=VALUE` sets one key on a dotted path (`loss.kl_coef=0.01`,",
    "`agents.solver.trainable.rank=16`: the agent with that id, else every agent with that role)",
    "after the file or preset and before `--seed`, `--steps`, `--device`, `--store` and `--model`;",
    "`--print-config` shows the result. Keys under a `kind` apply to that kind only; `[]`",
    "marks the elements of an array. Bounds on counts come from engine/config/bounds.ts, and rules",
    "across keys (unique ids, worker groups) from engine/config/cross-checks.ts.",
    "",
    "| key | type | default | meaning |",
    "| --- | --- | --- | --- |",
    ...table,
    "",
    "## Presets",
    "",
    '`--preset NAME` or `"extends": "NAME"`. A preset named after a paper follows that paper\'s',
    "script: engine/config/presets.ts cites the script's line beside each value it takes.",
    "",
    "| preset | what it runs | follows |",
    "| --- | --- | --- |",
    ...presetNames().map((name) =>
      `| \`${name}\` | ${cell(PRESET_SUMMARIES[name])} | ${cell(PRESET_REFERENCES[name])} |`
    ),
    "",
  ].join("\n");
}
