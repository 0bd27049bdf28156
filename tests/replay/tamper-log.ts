/**
 * Edits a SQLite event store behind its back, as an attacker or a bug would: an event's type or
 * data, the hash chain recomputed after such an edit (so `verify` alone cannot see it), the tail
 * of a stream cut off with or without its recorded head.
 */
import { cp } from "node:fs/promises";
import { DatabaseSync } from "node:sqlite";
import { chainHash, GENESIS_HASH } from "../../events/mod.ts";

interface Row {
  position: number;
  id: string;
  stream: string;
  version: number;
  type: string;
  schema_version: number;
  data: string;
  tensors: Uint8Array;
  hash: string;
}

function withDb<T>(path: string, body: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(path);
  try {
    return body(db);
  } finally {
    db.close();
  }
}

/** Copies a SQLite store (`x.sqlite`) and its blob folder (`x.blobs/`) to `to`. */
export async function copyStore(from: string, to: string): Promise<string> {
  await Deno.copyFile(from, to);
  const blobs = (p: string) => p.replace(/\.sqlite$/, ".blobs");
  await cp(blobs(from), blobs(to), { recursive: true });
  return to;
}

/** The first event of `type` in `stream`: its position and version. */
export function firstOfType(path: string, stream: string, type: string) {
  return withDb(path, (db) =>
    db.prepare(
      "SELECT position, version FROM events WHERE stream = ? AND type = ? ORDER BY position LIMIT 1",
    ).get(stream, type) as { position: number; version: number });
}

/** Renames the stored type of the event at `position` (its data and hash stay). */
export function editType(path: string, position: number, type: string): void {
  withDb(
    path,
    (db) => db.prepare("UPDATE events SET type = ? WHERE position = ?").run(type, position),
  );
}

/** Rewrites the canonical JSON data of the event at `position` (its hash stays). */
export function editData(
  path: string,
  position: number,
  edit: (data: Record<string, unknown>) => void,
): void {
  withDb(path, (db) => {
    const row = db.prepare("SELECT data FROM events WHERE position = ?").get(position) as {
      data: string;
    };
    const data = JSON.parse(row.data);
    edit(data);
    db.prepare("UPDATE events SET data = ? WHERE position = ?").run(JSON.stringify(data), position);
  });
}

/**
 * Recomputes the hash chain of `stream` from its first event and rewrites its recorded head, so
 * the stored log is self-consistent again after an edit and `verify` reports nothing.
 */
export function rehashStream(path: string, stream: string): void {
  withDb(path, (db) => {
    const rows = db.prepare(
      "SELECT position, id, stream, version, type, schema_version, data, tensors, hash " +
        "FROM events WHERE stream = ? ORDER BY version",
    ).all(stream) as unknown as Row[];
    let prev = GENESIS_HASH;
    const update = db.prepare("UPDATE events SET hash = ? WHERE position = ?");
    for (const r of rows) {
      prev = chainHash(prev, {
        id: r.id,
        stream: r.stream,
        version: r.version,
        type: r.type,
        schemaVersion: r.schema_version,
        data: r.data,
        tensors: new Uint8Array(r.tensors),
      });
      update.run(prev, r.position);
    }
    const last = rows[rows.length - 1];
    db.prepare("UPDATE streams SET version = ?, hash = ?, position = ? WHERE stream = ?")
      .run(last.version, prev, last.position, stream);
  });
}

/**
 * Deletes the events of `stream` after version `keep`; `tidy` also rewrites its recorded head to
 * the last kept event, so `verify` sees a shorter but intact stream.
 */
export function truncateStream(path: string, stream: string, keep: number, tidy: boolean): void {
  withDb(path, (db) => {
    db.prepare("DELETE FROM events WHERE stream = ? AND version > ?").run(stream, keep);
    if (!tidy) return;
    const last = db.prepare(
      "SELECT version, hash, position FROM events WHERE stream = ? AND version = ?",
    ).get(stream, keep) as { version: number; hash: string; position: number };
    db.prepare("UPDATE streams SET version = ?, hash = ?, position = ? WHERE stream = ?")
      .run(last.version, last.hash, last.position, stream);
  });
}
