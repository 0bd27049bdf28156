import type { EventType, NewEvent, StoredEvent } from "../../events/mod.ts";
import { type EventTableDeclaration, rowValues } from "./define-table.ts";
import { EVENT_TABLES, type TableName } from "./tables.ts";

/** One row for one base table, values in the table's column order. */
export type TableRow = readonly [TableName, readonly unknown[]];

/** The tables each event type gives rows to, in creation order. */
const TABLES_BY_TYPE: ReadonlyMap<EventType, readonly EventTableDeclaration<TableName, unknown>[]> =
  (() => {
    const byType = new Map<EventType, EventTableDeclaration<TableName, unknown>[]>();
    for (const table of EVENT_TABLES as readonly EventTableDeclaration<TableName, unknown>[]) {
      for (const type of table.events) byType.set(type, [...byType.get(type) ?? [], table]);
    }
    return byType;
  })();

/**
 * The base-table rows one event contributes, as its tables' declarations read them (tables.ts;
 * none for types no table models). Pure: rebuilding from the same log gives the same rows.
 *
 * @example
 * ```ts
 * import type { NewEvent, StoredEvent } from "../../events/mod.ts";
 * import { eventRows } from "./event-rows.ts";
 * import type { TableName } from "./tables.ts";
 * declare const storedEvent: StoredEvent<NewEvent>;
 * declare const buffers: Record<TableName, (readonly unknown[])[]>;
 *
 * for (const [table, row] of eventRows(storedEvent)) buffers[table].push(row);
 * ```
 */
export function eventRows(e: StoredEvent<NewEvent>): TableRow[] {
  const rows: TableRow[] = [];
  for (const table of TABLES_BY_TYPE.get(e.type) ?? []) {
    for (const source of table.rows(e)) rows.push([table.name, rowValues(table, source)]);
  }
  return rows;
}
