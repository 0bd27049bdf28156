/**
 * Integrity check of a stored log: global positions gap-free from 1, each stream's versions
 * contiguous from 1, every stored hash equal to `sha256(prev_hash || canonical_bytes)`, each
 * stream's last event matching the head recorded with it (catches a truncated tail), every event
 * decodable under a known type, every referenced blob present and intact.
 *
 * @example
 * ```ts
 * import type { EventStore } from "./store/event-store.ts";
 *
 * declare const store: EventStore;
 * const report = await store.verify();
 * if (!report.ok) console.log(report.firstProblem); // { position: 57, reason: "...", ... }
 * ```
 */
import type { AnyEvent, Catalogue } from "./define-event.ts";
import { decodeCanonical } from "./canonical.ts";
import { chainHash, GENESIS_HASH } from "./hash-chain.ts";
import type { Backend, EventRow } from "./store/backend.ts";

/** What is wrong at a position. */
export type ProblemKind =
  | "position-gap"
  | "version-gap"
  | "hash-mismatch"
  | "unreadable"
  | "head-mismatch"
  | "blob-missing"
  | "blob-damaged";

/** One finding of `verify`. */
export interface VerifyProblem {
  readonly kind: ProblemKind;
  /** global position of the first affected (possibly missing) event */
  readonly position: number;
  readonly stream: string | null;
  readonly version: number | null;
  readonly reason: string;
}

/** The outcome of `verify`. */
export interface VerifyReport {
  readonly ok: boolean;
  readonly target: string;
  /** the stream checked, or null for the whole log */
  readonly stream: string | null;
  readonly streams: number;
  readonly events: number;
  readonly blobs: number;
  /** problems in position order */
  readonly problems: readonly VerifyProblem[];
  readonly firstProblem: VerifyProblem | null;
}

const PAGE = 1024;

interface Chain {
  version: number;
  hash: string;
  lastPosition: number;
}

/** Verifies the whole log, or one stream of it. */
export async function verifyLog<N extends AnyEvent>(
  backend: Backend,
  catalogue: Catalogue<N>,
  { stream }: { stream?: string } = {},
): Promise<VerifyReport> {
  const problems: VerifyProblem[] = [];
  const chains = new Map<string, Chain>();
  const blobRefs = new Map<string, { position: number; stream: string; version: number }>();
  let events = 0;
  let expectedPosition = 1;
  const gaps: [first: number, last: number][] = [];
  // The first position that is absent from the log after `p`: where an event lost from a stream
  // whose last surviving event sits at `p` must have been.
  const firstMissingAfter = (p: number) => {
    const gap = gaps.find(([, last]) => last > p);
    return gap ? Math.max(gap[0], p + 1) : expectedPosition;
  };
  const problem = (p: VerifyProblem) => problems.push(Object.freeze(p));

  const check = (row: EventRow) => {
    events++;
    if (stream === undefined && row.position !== expectedPosition) {
      gaps.push([expectedPosition, row.position - 1]);
      problem({
        kind: "position-gap",
        position: expectedPosition,
        stream: null,
        version: null,
        reason: (row.position - 1 === expectedPosition
          ? `position ${expectedPosition} is missing`
          : `positions ${expectedPosition}..${row.position - 1} are missing`) + " (rows deleted)",
      });
    }
    expectedPosition = row.position + 1;
    const at = { position: row.position, stream: row.stream, version: row.version };
    const chain = chains.get(row.stream) ?? { version: 0, hash: GENESIS_HASH, lastPosition: 0 };
    chains.set(row.stream, chain);
    if (row.version !== chain.version + 1) {
      // The chain is broken here by the gap itself; the hash check would only repeat it.
      problem({
        kind: "version-gap",
        ...at,
        reason: `stream ${row.stream} jumps from version ${chain.version} to ${row.version} ` +
          `(events deleted)`,
      });
    } else if (chainHash(chain.hash, row) !== row.hash) {
      problem({
        kind: "hash-mismatch",
        ...at,
        reason: `stored hash does not match the event's bytes or its predecessor (edited)`,
      });
    }
    Object.assign(chain, { version: row.version, hash: row.hash, lastPosition: row.position });
    try {
      const def = catalogue.definition(row.type);
      const data = catalogue.upcast(
        row.type,
        row.schemaVersion,
        decodeCanonical(row.data, row.tensors),
      );
      for (const hash of def.blobRefs(data as never)) {
        if (!blobRefs.has(hash)) blobRefs.set(hash, at);
      }
    } catch (err) {
      problem({ kind: "unreadable", ...at, reason: (err as Error).message });
    }
  };

  const read = stream === undefined
    ? (from: number) => backend.readAll(from, PAGE)
    : (from: number) => backend.readStream(stream, from, PAGE);
  for (let from = 1;;) {
    const rows = await read(from);
    if (rows.length === 0) break;
    rows.forEach(check);
    const last = rows[rows.length - 1];
    from = (stream === undefined ? last.position : last.version) + 1;
  }

  const heads = (await backend.heads()).filter((h) => stream === undefined || h.stream === stream);
  const recordedEnd = Math.max(0, ...heads.map((h) => h.position));
  if (stream === undefined && recordedEnd >= expectedPosition) {
    problem({
      kind: "position-gap",
      position: expectedPosition,
      stream: null,
      version: null,
      reason: `the log ends at position ${expectedPosition - 1} but stream heads record events ` +
        `up to position ${recordedEnd} (tail truncated)`,
    });
  }
  for (const head of heads) {
    const chain = chains.get(head.stream) ?? { version: 0, hash: GENESIS_HASH, lastPosition: 0 };
    if (chain.version !== head.version || chain.hash !== head.hash) {
      problem({
        kind: "head-mismatch",
        position: chain.version < head.version
          ? firstMissingAfter(chain.lastPosition)
          : chain.lastPosition,
        stream: head.stream,
        version: chain.version + 1,
        reason: chain.version < head.version
          ? `stream ${head.stream} ends at version ${chain.version} but its head records ` +
            `version ${head.version} at position ${head.position} (tail truncated)`
          : `stream ${head.stream} ends at version ${chain.version} (hash ` +
            `${chain.hash.slice(0, 12)}) but its head records version ${head.version} (hash ` +
            `${head.hash.slice(0, 12)})`,
      });
    }
  }
  for (const [name, chain] of chains) {
    if (!heads.some((h) => h.stream === name)) {
      problem({
        kind: "head-mismatch",
        position: chain.lastPosition,
        stream: name,
        version: chain.version,
        reason: `stream ${name} has events but no recorded head`,
      });
    }
  }
  for (const [hash, at] of blobRefs) {
    const status = await backend.blobs.check(hash);
    if (status !== "ok") {
      problem({
        kind: status === "missing" ? "blob-missing" : "blob-damaged",
        ...at,
        reason: `blob ${hash} referenced here is ${status}`,
      });
    }
  }
  problems.sort((a, b) => a.position - b.position);
  return Object.freeze({
    ok: problems.length === 0,
    target: backend.target,
    stream: stream ?? null,
    streams: chains.size,
    events,
    blobs: blobRefs.size,
    problems,
    firstProblem: problems[0] ?? null,
  });
}
