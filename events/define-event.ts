/**
 * The machinery of a versioned event catalogue: one definition per `(type, schema_version)` in
 * current use, upcasters that lift older stored versions to the current one on read, and runtime
 * validation whose errors name the field. A definition may declare the top-level fields each
 * version added (`addedFields`), so that `asOfVersion` can view current data as an older version
 * recorded it: how replay compares a fresh event with one logged before the version change.
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { createCatalogue, defineEvent } from "./define-event.ts";
 *
 * const noteV2 = defineEvent({
 *   type: "note.added",
 *   schemaVersion: 2,
 *   schema: z.strictObject({ step: z.number().int(), text: z.string(), author: z.string() }),
 *   coordinates: (d) => ({ step: d.step }),
 * });
 * const catalogue = createCatalogue([noteV2], [
 *   { type: "note.added", fromVersion: 1, up: (d) => ({ ...(d as object), author: "unknown" }) },
 * ]);
 * catalogue.upcast("note.added", 1, { step: 0, text: "hi" }); // { step: 0, text: "hi", author: "unknown" }
 * ```
 */
import type { z } from "zod";
import type { Coordinates } from "./event-id.ts";
import { EventValidationError, SchemaVersionError, UnknownEventTypeError } from "./errors.ts";

/** One event type at its current schema version. */
export interface EventDefinition<T extends string = string, D = unknown> {
  readonly kind: "event-definition";
  readonly type: T;
  readonly schemaVersion: number;
  readonly schema: z.ZodType<D>;
  /** The coordinates the event id derives from (besides stream and type). */
  readonly coordinates: (data: D) => Coordinates;
  /** SHA-256 keys of the blobs the event refers to; `verify` checks that each exists intact. */
  readonly blobRefs: (data: D) => readonly string[];
  /**
   * The top-level fields each version added, keyed by that version: what `asOfVersion` strips
   * to see current data as an older version recorded it.
   */
  readonly addedFields: Readonly<Record<number, readonly string[]>>;
  /**
   * The catalogue generation that introduced the type (1: the types of the first recorded runs).
   * A run records its code's generation in `run.started`; code of an earlier generation never
   * wrote this type, so replaying such a run does not expect it.
   */
  readonly since: number;
}

/** Declares an event type; `blobRefs` defaults to none, `since` to generation 1. */
export function defineEvent<T extends string, D>(spec: {
  type: T;
  schemaVersion: number;
  schema: z.ZodType<D>;
  coordinates: (data: D) => Coordinates;
  blobRefs?: (data: D) => readonly (string | null)[];
  addedFields?: Readonly<Record<number, readonly string[]>>;
  since?: number;
}): EventDefinition<T, D> {
  const blobRefs = spec.blobRefs;
  return Object.freeze({
    kind: "event-definition",
    type: spec.type,
    schemaVersion: spec.schemaVersion,
    schema: spec.schema,
    coordinates: spec.coordinates,
    blobRefs: blobRefs
      ? (data: D) => blobRefs(data).filter((h): h is string => typeof h === "string")
      : () => [],
    addedFields: Object.freeze({ ...spec.addedFields }),
    since: spec.since ?? 1,
  });
}

/**
 * Current data as an event of `version` carried it: the top-level fields added after `version`
 * are dropped. Replay compares a freshly produced event with an older logged one this way, so a
 * version that only adds fields does not make every old log diverge. (An upcast older event
 * carries those fields too, with placeholder values; both sides are stripped alike.)
 *
 * @example
 * ```ts
 * import { z } from "zod";
 * import { asOfVersion, defineEvent } from "./define-event.ts";
 *
 * const def = defineEvent({
 *   type: "note.added",
 *   schemaVersion: 2,
 *   schema: z.strictObject({ text: z.string(), author: z.string().nullable() }),
 *   coordinates: () => ({}),
 *   addedFields: { 2: ["author"] },
 * });
 * asOfVersion(def, { text: "hi", author: "ann" }, 1); // { text: "hi" }
 * ```
 */
export function asOfVersion(
  definition: Pick<EventDefinition, "type" | "schemaVersion" | "addedFields">,
  data: unknown,
  version: number,
): unknown {
  if (version >= definition.schemaVersion) return data;
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new TypeError(`${definition.type} data is not an object: cannot view it as v${version}`);
  }
  const later = Object.entries(definition.addedFields)
    .filter(([v]) => Number(v) > version)
    .flatMap(([, names]) => names);
  if (later.length === 0) return data;
  const drop = new Set(later);
  return Object.fromEntries(Object.entries(data).filter(([k]) => !drop.has(k)));
}

/** Lifts stored data of `(type, fromVersion)` to `fromVersion + 1`. */
export interface Upcaster {
  readonly type: string;
  readonly fromVersion: number;
  readonly up: (data: unknown) => unknown;
}

/** What a catalogue needs to know of a definition's static type (its data type is covariant). */
export type DefinitionLike = Pick<
  EventDefinition,
  "kind" | "type" | "schemaVersion" | "schema" | "since"
>;

/** The union of `{type, data}` shapes that a list of definitions describes. */
export type EventOf<Defs extends readonly DefinitionLike[]> = {
  [I in keyof Defs]: Defs[I] extends { type: infer T extends string; schema: z.ZodType<infer D> }
    ? { type: T; data: D }
    : never;
}[number];

/** A set of definitions and upcasters; `N` is the union of `{type, data}` it accepts. */
export interface Catalogue<N extends { type: string; data: unknown } = AnyEvent> {
  readonly kind: "catalogue";
  readonly types: readonly string[];
  /** The newest generation of its types (`EventDefinition.since`): what a run records. */
  readonly generation: number;
  /** The definition of `type`; throws UnknownEventTypeError. */
  definition(type: string): EventDefinition<string, unknown>;
  /** Validates data for `type` and returns the parsed copy; throws EventValidationError. */
  validate<E extends N>(type: E["type"], data: unknown): E["data"];
  /** Brings stored data of `schemaVersion` to the current version; throws SchemaVersionError. */
  upcast(type: string, schemaVersion: number, data: unknown): unknown;
  /** Phantom marker carrying `N` for type inference; always undefined. */
  readonly _events?: N;
}

/** The widest event shape: any type, any data. */
export interface AnyEvent {
  readonly type: string;
  readonly data: unknown;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)
    .join("");
}

/** Builds a catalogue from definitions and upcasters keyed by `(type, fromVersion)`. */
export function createCatalogue<Defs extends readonly DefinitionLike[]>(
  definitions: Defs,
  upcasters: readonly Upcaster[] = [],
): Catalogue<EventOf<Defs>> {
  const byType = new Map<string, EventDefinition<string, unknown>>();
  for (const def of definitions) {
    if (byType.has(def.type)) throw new Error(`event type ${def.type} is defined twice`);
    byType.set(def.type, def as unknown as EventDefinition<string, unknown>);
  }
  const ups = new Map<string, Upcaster>();
  for (const u of upcasters) ups.set(`${u.type}@${u.fromVersion}`, u);
  const types = Object.freeze([...byType.keys()]);
  const definition = (type: string) => {
    const def = byType.get(type);
    if (!def) throw new UnknownEventTypeError(type, types);
    return def;
  };
  return Object.freeze({
    kind: "catalogue" as const,
    types,
    generation: Math.max(1, ...definitions.map((d) => d.since)),
    definition,
    validate(type: string, data: unknown) {
      const result = definition(type).schema.safeParse(data);
      if (result.success) return result.data;
      const issue = result.error.issues[0];
      throw new EventValidationError(type, formatPath(issue.path), issue.message);
    },
    upcast(type: string, schemaVersion: number, data: unknown) {
      const current = definition(type).schemaVersion;
      if (schemaVersion > current) throw new SchemaVersionError(type, schemaVersion, current);
      let out = data;
      for (let v = schemaVersion; v < current; v++) {
        const up = ups.get(`${type}@${v}`);
        if (!up) throw new SchemaVersionError(type, v, current);
        out = up.up(out);
      }
      return out;
    },
  }) as Catalogue<EventOf<Defs>>;
}
