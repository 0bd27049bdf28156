/**
 * The machinery of a projection table declaration: one declaration per DuckDB base table names
 * it, says what it holds, which events give its rows and, per column, the DuckDB type, the meaning
 * (analysis/TABLES.md's text) and how the value is read. The DDL, the rows the projector appends,
 * the Kysely row types, TABLES.md's table sections and the schema version all derive from it
 * (the house model is events/define-event.ts: a declaration that drives the rest).
 *
 * @example
 * ```ts
 * const checkpoints = eventTable({
 *   name: "checkpoints",
 *   about: "One row per `checkpoint.saved`.",
 *   events: ["checkpoint.saved"],
 *   rows: (e) => [e],
 * }).columns({
 *   run_id: { type: "VARCHAR", meaning: "the run", value: (e) => e.stream },
 *   bytes: { type: "BIGINT", meaning: "size of the blob", value: (e) => e.data.bytes },
 * });
 * tableDdl(checkpoints); // CREATE TABLE checkpoints ("run_id" VARCHAR, "bytes" BIGINT)
 * type Checkpoint = RowOf<typeof checkpoints>; // { run_id: string; bytes: number }
 * ```
 */
import type { EventType, NewEvent, StoredEvent } from "../../events/mod.ts";

/** Column types the appender writes. */
export type ColumnType = "VARCHAR" | "BIGINT" | "DOUBLE" | "BOOLEAN";

/** The JavaScript value the appender writes to a column of each type (BIGINT: a safe integer). */
export interface ValueOfType {
  VARCHAR: string;
  BIGINT: number;
  DOUBLE: number;
  BOOLEAN: boolean;
}

/**
 * One column, read from one row source `S`: a value of its type, or null (SQL NULL). Its key in
 * the table's `columns` is its name; the keys' order is the columns' order.
 */
export type Column<S> = {
  [T in ColumnType]: {
    readonly type: T;
    /** What the value is, as TABLES.md prints it (markdown, one line). */
    readonly meaning: string;
    readonly value: (row: S) => ValueOfType[T] | null;
  };
}[ColumnType];

/** The columns of a table whose rows are read from `S`, by name. */
export type Columns<S> = Readonly<Record<string, Column<S>>>;

/** A stored event of one of the types `E`. */
export type EventOfType<E extends EventType> = StoredEvent<Extract<NewEvent, { type: E }>>;

/** A base table: its name, what it holds (markdown for TABLES.md) and its columns. */
export interface TableDeclaration<
  N extends string = string,
  S = never,
  C extends Columns<S> = Columns<S>,
> {
  readonly kind: "table-declaration";
  readonly name: N;
  readonly about: string;
  readonly columns: C;
  /** `columns` as `[name, column]`, in order. */
  readonly columnList: readonly (readonly [string, Column<S>])[];
}

/** A table projected from the log: the event types whose rows it holds, and how. */
export interface EventTableDeclaration<
  N extends string = string,
  S = never,
  C extends Columns<S> = Columns<S>,
> extends TableDeclaration<N, S, C> {
  readonly events: readonly EventType[];
  /** The row sources of one event of `events`, in row order. */
  readonly rows: (event: StoredEvent<NewEvent>) => readonly S[];
}

/** The Kysely row type of a table: each column's type, `| null` where its reader may give null. */
export type RowOf<T extends TableDeclaration<string, never, Columns<never>>> = {
  -readonly [K in keyof T["columns"]]: T["columns"][K] extends {
    type: infer U extends ColumnType;
    value: (row: never) => infer V;
  } ? ValueOfType[U] | (null extends V ? null : never)
    : never;
};

/**
 * Declares a table projected from events of the types `events`: `rows` turns one event into the
 * sources of its rows (`[e]` for one row per event), then `.columns({...})` reads each column
 * from a source. In two calls so that the columns' readers are typed by what `rows` returns.
 */
export function eventTable<const N extends string, E extends EventType, S>(spec: {
  readonly name: N;
  readonly about: string;
  readonly events: readonly E[];
  readonly rows: (event: EventOfType<E>) => readonly S[];
}): { columns<const C extends Columns<S>>(columns: C): EventTableDeclaration<N, S, C> } {
  return {
    columns: <const C extends Columns<S>>(columns: C) =>
      Object.freeze({
        ...declaration<N, S, C>(spec.name, spec.about, columns),
        events: Object.freeze([...spec.events]),
        // Called only with events of `events` (eventRows dispatches on the type).
        rows: spec.rows as (event: StoredEvent<NewEvent>) => readonly S[],
      }),
  };
}

/**
 * Declares a table that no event fills: its rows are read from sources of type `S`, appended by
 * whoever owns them (`run_leases`: the store's writer leases, by copy-leases.ts). Curried so that
 * `S` is named while the name and columns are inferred.
 */
export function sourceTable<S>(): <const N extends string>(spec: {
  readonly name: N;
  readonly about: string;
}) => TableBuilder<N, S> {
  return <const N extends string>(spec: { readonly name: N; readonly about: string }) => ({
    columns: <const C extends Columns<S>>(columns: C) =>
      Object.freeze(declaration<N, S, C>(spec.name, spec.about, columns)),
  });
}

/** The second half of a declaration: its columns, read from `S`. */
export interface TableBuilder<N extends string, S> {
  columns<const C extends Columns<S>>(columns: C): TableDeclaration<N, S, C>;
}

function declaration<N extends string, S, C extends Columns<S>>(
  name: N,
  about: string,
  columns: C,
): TableDeclaration<N, S, C> {
  return {
    kind: "table-declaration",
    name,
    about,
    columns: Object.freeze(columns),
    columnList: Object.freeze(Object.entries(columns)),
  };
}

/** `CREATE TABLE` for a table: its columns in declaration order. */
export function tableDdl(table: TableDeclaration<string, never>): string {
  const columns = table.columnList.map(([name, c]) => `"${name}" ${c.type}`);
  return `CREATE TABLE ${table.name} (${columns.join(", ")})`;
}

/**
 * A table's row for one source, in column order (what the appender fills a data chunk from).
 *
 * @example
 * ```ts
 * import { type EventOfType, eventTable, rowValues } from "./define-table.ts";
 * declare const storedEvent: EventOfType<"checkpoint.saved">;
 *
 * const checkpoints = eventTable({
 *   name: "checkpoints",
 *   about: "One row per `checkpoint.saved`.",
 *   events: ["checkpoint.saved"],
 *   rows: (e) => [e],
 * }).columns({
 *   run_id: { type: "VARCHAR", meaning: "the run", value: (e) => e.stream },
 *   bytes: { type: "BIGINT", meaning: "size of the blob", value: (e) => e.data.bytes },
 * });
 * rowValues(checkpoints, storedEvent); // ["run-1", 5120]
 * ```
 */
export function rowValues<S>(table: TableDeclaration<string, S>, source: S): unknown[] {
  return table.columnList.map(([, c]) => c.value(source));
}
