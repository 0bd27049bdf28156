/**
 * The part of @duckdb/duckdb-wasm's API the SQL console uses. Its own typings pull in
 * apache-arrow's `/// <reference types="node" />` (@types/node 20), which would break type
 * checking of node:sqlite everywhere else in the project, so the console is typed by this file.
 */
export interface DuckDBBundle {
  mainModule: string;
  mainWorker: string | null;
  pthreadWorker: string | null;
}
export function selectBundle(
  bundles: Record<string, { mainModule: string; mainWorker: string }>,
): Promise<DuckDBBundle>;
export class VoidLogger {}
/** A result column's Arrow type (`typeId` 7 a decimal, with its `scale`; 8 a date; 10 a timestamp). */
export interface ArrowType {
  typeId: number;
  scale?: number;
}
export interface ArrowTable {
  schema: { fields: { name: string; type: ArrowType }[] };
  toArray(): { toJSON(): Record<string, unknown> }[];
}
export interface AsyncDuckDBConnection {
  query(sql: string): Promise<ArrowTable>;
}
export class AsyncDuckDB {
  constructor(logger: VoidLogger, worker: Worker);
  instantiate(mainModule: string, pthreadWorker?: string | null): Promise<void>;
  registerFileBuffer(name: string, buffer: Uint8Array): Promise<void>;
  connect(): Promise<AsyncDuckDBConnection>;
}
