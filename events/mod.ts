/**
 * The event log: the public API that the engine, analysis and web import. Nothing else in
 * `events/` is meant to be imported from outside it, except `events/cli/mod.ts`, the helpers every
 * command-line task shares (docs/ARCHITECTURE.md, "Layers").
 *
 * Write a run:
 * ```ts
 * import { hashConfig, type NewEvent, openStore } from "../events/mod.ts";
 *
 * await using store = await openStore(".polyrl/events.sqlite"); // or "postgres://..."
 * const turn: NewEvent = {
 *   type: "turn.generated",
 *   data: {
 *     step: 0, phase: "rollout", trajectory: "s0-p0-k0", prompt: 0, sample: 0, turn: 0,
 *     agent: "solver", role: "solver", workerGroup: "wg0",
 *     promptTokens: new Int32Array([1, 2, 3]), responseTokens: new Int32Array([4, 5]),
 *     logprobs: new Float32Array([-0.1, -2.3]), finishReason: "stop",
 *     parsedAnswer: "42", correct: true, text: "... 42",
 *   },
 * };
 * const { version } = await store.append("run-1", [turn], { expectedVersion: 0 });
 * ```
 *
 * Read it back, or follow it live:
 * ```ts
 * import type { EventStore, NewEvent } from "../events/mod.ts";
 *
 * declare const store: EventStore<NewEvent>;
 * for await (const e of store.readStream("run-1")) {
 *   if (e.type === "turn.generated") console.log(e.data.logprobs); // Float32Array
 * }
 * const stop = new AbortController();
 * for await (const e of store.subscribe({ from: 1, signal: stop.signal })) console.log(e.position);
 * ```
 *
 * Large state goes to the blob store; events carry its SHA-256 key:
 * ```ts
 * import type { EventStore, NewEvent } from "../events/mod.ts";
 *
 * declare const store: EventStore<NewEvent>;
 * declare const weightsBytes: Uint8Array;
 * declare const parameterHash: string; // SHA-256 of the parameters, 64 hex digits
 * const blob = await store.blobs.put(weightsBytes);
 * await store.append("run-1", [{ type: "checkpoint.saved", data: { step: 3, workerGroup: "wg0",
 *   blob, bytes: weightsBytes.length, parameterHash, optimizerBlob: null, format: "f32le" } }]);
 * ```
 *
 * Semantics worth knowing: a run's stream id is its run id; event ids derive from coordinates
 * (see the table in catalogue.ts), so re-appending an identical event is a no-op and a different
 * event with the same coordinates is an EventIdConflictError; global positions are gap-free in
 * commit order on both stores; decoded typed arrays may be views into the stored bytes.
 *
 * @module
 */

// Catalogue: event types, their data, validation.
export {
  type EventData,
  type EventType,
  hashConfig,
  type NewEvent,
  runCatalogue,
  runEventDefinitions,
  runEventUpcasters,
} from "./catalogue.ts";
export {
  type AnyEvent,
  asOfVersion,
  type Catalogue,
  createCatalogue,
  defineEvent,
  type EventDefinition,
  type EventOf,
  type Upcaster,
} from "./define-event.ts";
export * as fields from "./fields.ts";
export { ANNOTATIONS_STREAM, TAG_RULE } from "./run-annotations.ts";
export { annotateRun, type RunAnnotation } from "./annotate-run.ts";
export { failedRunStatus, INTERRUPTED_STAGE } from "./run-interruption.ts";
export {
  LEASE_HEARTBEAT_MS,
  LEASE_TIMEOUT_MS,
  leaseIsLive,
  processExists,
} from "./lease-liveness.ts";

// Encoding, ids, hashing.
export { type CanonicalValue, decodeCanonical, encodeCanonical } from "./canonical.ts";
export { type Coordinates, eventId } from "./event-id.ts";
export { checkRunId, isRunId, RUN_ID_RULE, RunIdError, runIdSlug } from "./run-id.ts";
export { chainHash, GENESIS_HASH, type HashedParts, sha256Hex } from "./hash-chain.ts";

// Stores.
export type {
  AppendedEvent,
  AppendOptions,
  AppendResult,
  EventStore,
  RecordedEvent,
  RunLease,
  StoredEvent,
  StoreKind,
  StreamHead,
  SubscribeOptions,
} from "./store/event-store.ts";
export { openStore, type OpenStoreOptions } from "./store/open-store.ts";
export {
  DEFAULT_STORE,
  isPostgresUrl,
  parseStoreTarget,
  type StoreTarget,
} from "./store/store-target.ts";
export { postgresOpenError, redactUrl } from "./store/postgres-open-error.ts";
export type { ProblemKind, VerifyProblem, VerifyReport } from "./verify.ts";

// Blobs.
export type { BlobStatus, BlobStore } from "./blob-store.ts";
export { filesystemBlobStore } from "./blob-store-fs.ts";

// Errors.
export {
  BlobIntegrityError,
  BlobNotFoundError,
  CanonicalEncodingError,
  EventIdConflictError,
  EventLogError,
  EventValidationError,
  NotAnEventStoreError,
  SchemaVersionError,
  StoreCorruptError,
  StoreNotFoundError,
  StoreOpenError,
  StoreReadOnlyError,
  StoreTargetError,
  StoreVersionError,
  StoreWriteError,
  UnknownEventTypeError,
  WrongExpectedVersionError,
} from "./errors.ts";
