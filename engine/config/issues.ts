/**
 * Turns zod's issues into ConfigIssues that name the key, the value found in the file and what is
 * allowed, in words a config author can act on (including the allowed keys of an object and a
 * did-you-mean for misspelled ones).
 */
import { closestMatch } from "leven";
import { z } from "zod";
import type { ConfigIssue } from "./errors.ts";

type Path = readonly PropertyKey[];

/** `["agents", 1, "trainable", "rank"]` -> `agents[1].trainable.rank`. */
export function keyOf(path: Path): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))) {
      out += out ? `.${String(part)}` : String(part);
    } else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/** The raw value at `path`, or undefined. */
export function valueAt(raw: unknown, path: Path): unknown {
  let v: unknown = raw;
  for (const part of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[part];
  }
  return v;
}

/** The schema a value is checked against: defaults, optionals and transforms (a pipe's input) off. */
function unwrap(s: z.ZodType | undefined): z.ZodType | undefined {
  let out = s;
  while (
    out instanceof z.ZodDefault || out instanceof z.ZodOptional || out instanceof z.ZodPrefault ||
    out instanceof z.ZodPipe
  ) {
    out = (out instanceof z.ZodPipe ? out.def.in : out.def.innerType) as z.ZodType;
  }
  return out;
}

function pickOption(s: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  if (!(s instanceof z.ZodDiscriminatedUnion)) return s;
  const tag = valueAt(value, [s.def.discriminator]);
  return (s.options as z.ZodType[]).find((option) => {
    const literal = option instanceof z.ZodObject ? option.shape[s.def.discriminator] : undefined;
    return literal instanceof z.ZodLiteral && literal.values.has(tag as never);
  });
}

/** The schema that governs `path` in `raw` (following discriminated unions by their tag). */
export function schemaAt(schema: z.ZodType, raw: unknown, path: Path): z.ZodType | undefined {
  let s = pickOption(unwrap(schema), raw);
  let v = raw;
  for (const part of path) {
    if (s instanceof z.ZodObject) s = s.shape[String(part)] as z.ZodType | undefined;
    else if (s instanceof z.ZodArray) s = s.element as z.ZodType;
    else if (s instanceof z.ZodRecord) s = s.def.valueType as z.ZodType;
    else return undefined;
    v = valueAt(v, [part]);
    s = pickOption(unwrap(s), v);
  }
  return s;
}

/** `one of the keys a, b, c (did you mean b?)`. */
export function allowedKeysText(unknown: string, allowed: readonly string[]): string {
  const near = closestMatch(unknown, allowed, { maxDistance: 2 });
  const hint = near === undefined ? "" : ` (did you mean ${near}?)`;
  return `one of the keys ${allowed.join(", ")}${hint}`;
}

const TYPE_WORDS: Record<string, string> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "an object",
  record: "an object",
};

function numberWord(s: z.ZodType | undefined): string {
  return s instanceof z.ZodNumber && s.isInt ? "an integer" : "a number";
}

function boundText(
  issue: { origin?: string; inclusive?: boolean },
  bound: number | bigint,
  below: boolean,
  s: z.ZodType | undefined,
): string {
  const n = Number(bound);
  if (issue.origin === "array") return below ? `at least ${n} item(s)` : `at most ${n} item(s)`;
  if (issue.origin === "string") {
    return below ? `at least ${n} character(s)` : `at most ${n} character(s)`;
  }
  const op = below ? (issue.inclusive ? ">=" : ">") : (issue.inclusive ? "<=" : "<");
  return `${numberWord(s)} ${op} ${n}`;
}

/** zod's own messages start like this; any other message was written into the schema. */
const ZOD_DEFAULT_MESSAGE = /^(Invalid|Too (small|big)|Unrecognized)/;

function allowedFor(issue: z.core.$ZodIssue, schema: z.ZodType, raw: unknown): string {
  if (!ZOD_DEFAULT_MESSAGE.test(issue.message)) return issue.message;
  const here = schemaAt(schema, raw, issue.path);
  switch (issue.code) {
    case "invalid_type":
      return issue.expected === "number"
        ? numberWord(here)
        : (TYPE_WORDS[issue.expected] ?? `a value of type ${issue.expected}`);
    case "too_small":
      return boundText(issue, issue.minimum, true, here);
    case "too_big":
      return boundText(issue, issue.maximum, false, here);
    case "invalid_value":
      return `one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    case "invalid_union": {
      // A discriminated union with an unknown tag lists its tags (not in zod's issue type).
      const tags = (issue as { options?: unknown }).options;
      if (Array.isArray(tags)) return `one of ${tags.map((v) => JSON.stringify(v)).join(", ")}`;
      const branches = issue.errors.map((branch) =>
        branch.map((inner) => allowedFor({ ...inner, path: issue.path }, schema, raw)).join(", ")
      );
      return [...new Set(branches)].join("; or ");
    }
    default:
      return issue.message;
  }
}

/** ConfigIssues for a failed zod parse of `raw` against `schema`. */
export function issuesFromZod(error: z.ZodError, schema: z.ZodType, raw: unknown): ConfigIssue[] {
  const out: ConfigIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const owner = schemaAt(schema, raw, issue.path);
      const keyType = owner instanceof z.ZodRecord ? owner.def.keyType : undefined;
      const allowed = owner instanceof z.ZodObject
        ? Object.keys(owner.shape)
        : keyType instanceof z.ZodEnum
        ? keyType.options.map(String)
        : [];
      for (const key of issue.keys) {
        const path = [...issue.path, key];
        out.push({
          key: keyOf(path),
          value: valueAt(raw, path),
          allowed: allowed.length ? allowedKeysText(key, allowed) : "no such key",
        });
      }
      continue;
    }
    out.push({
      key: keyOf(issue.path),
      value: valueAt(raw, issue.path),
      allowed: allowedFor(issue, schema, raw),
    });
  }
  return out;
}
