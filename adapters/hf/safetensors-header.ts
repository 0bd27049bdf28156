/**
 * The safetensors header: an 8-byte little-endian length N, then N bytes of JSON mapping tensor
 * names to `{dtype, shape, data_offsets: [begin, end]}` (offsets relative to the byte after the
 * header) plus an optional `__metadata__` string map. This is the project's own small
 * implementation of that published format, not a port of the reference library.
 */
import { SAFETENSORS_DTYPE_BYTES } from "./dtype.ts";
import { CorruptSafetensorsError } from "./errors.ts";
import { elementCount } from "./tensor.ts";

/** Same ceiling as the reference implementation: a larger header is treated as corrupt. */
export const MAX_HEADER_BYTES = 100_000_000;

/** Where one tensor's bytes lie in its file. */
export interface SafetensorsEntry {
  readonly kind: "safetensors-entry";
  readonly name: string;
  readonly dtype: string;
  readonly shape: readonly number[];
  /** Absolute byte offset in the file (header included). */
  readonly start: number;
  readonly byteLength: number;
}

/** A parsed header: entries in name order, metadata, and where the data region starts. */
export interface SafetensorsHeader {
  readonly kind: "safetensors-header";
  readonly entries: ReadonlyMap<string, SafetensorsEntry>;
  readonly metadata: Readonly<Record<string, string>>;
  readonly dataStart: number;
}

/**
 * Parses and validates the header bytes (everything after the 8-byte length prefix).
 * `fileSize` lets it detect a truncated data region before any tensor is read.
 * @example
 * ```ts
 * import { parseSafetensorsHeader } from "./safetensors-header.ts";
 *
 * declare const jsonBytes: Uint8Array; // the header, after its 8-byte length
 * declare const dataBytes: number; // the size of the tensor data that follows it
 * parseSafetensorsHeader("m.safetensors", jsonBytes, 8 + jsonBytes.length + dataBytes);
 * ```
 */
export function parseSafetensorsHeader(
  path: string,
  headerBytes: Uint8Array,
  fileSize: number,
): SafetensorsHeader {
  const fail = (detail: string): never => {
    throw new CorruptSafetensorsError(path, detail);
  };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(headerBytes));
  } catch (e) {
    fail(`header is not valid UTF-8 JSON (${(e as Error).message})`);
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    fail("header JSON is not an object");
  }
  const dataStart = 8 + headerBytes.length;
  const dataSize = fileSize - dataStart;
  let metadata: Record<string, string> = {};
  const entries: SafetensorsEntry[] = [];
  for (const [name, value] of Object.entries(json as Record<string, unknown>)) {
    if (name === "__metadata__") {
      metadata = parseMetadata(value, fail);
      continue;
    }
    entries.push(parseEntry(name, value, dataStart, dataSize, fail));
  }
  checkNoOverlap(entries, dataStart, fail);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Object.freeze({
    kind: "safetensors-header",
    entries: new Map(entries.map((e) => [e.name, e])),
    metadata: Object.freeze(metadata),
    dataStart,
  });
}

function parseMetadata(value: unknown, fail: (d: string) => never): Record<string, string> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    fail("__metadata__ is not an object");
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== "string") fail(`__metadata__.${k} is not a string`);
    out[k] = v as string;
  }
  return out;
}

function parseEntry(
  name: string,
  value: unknown,
  dataStart: number,
  dataSize: number,
  fail: (d: string) => never,
): SafetensorsEntry {
  const v = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
  if (typeof v !== "object" || v === null) fail(`entry ${name} is not an object`);
  if (typeof v.dtype !== "string") fail(`entry ${name} has no string dtype`);
  const dtype = v.dtype as string;
  const width = SAFETENSORS_DTYPE_BYTES[dtype];
  if (width === undefined) fail(`entry ${name} has unknown dtype ${dtype}`);
  const isDim = (d: unknown) => Number.isSafeInteger(d) && (d as number) >= 0;
  if (!Array.isArray(v.shape) || !v.shape.every(isDim)) {
    fail(`entry ${name} has an invalid shape ${JSON.stringify(v.shape)}`);
  }
  const offsets = v.data_offsets;
  if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every(isDim)) {
    fail(`entry ${name} has invalid data_offsets ${JSON.stringify(offsets)}`);
  }
  const shape = v.shape as number[];
  const [begin, end] = offsets as [number, number];
  const expectedBytes = elementCount(shape) * width;
  if (end - begin !== expectedBytes) {
    fail(
      `entry ${name}: data_offsets [${begin}, ${end}] span ${end - begin} bytes but ` +
        `${dtype} shape [${shape.join(", ")}] needs ${expectedBytes}`,
    );
  }
  if (end > dataSize) {
    fail(
      `truncated: tensor ${name} ends at data byte ${end} but the file holds only ` +
        `${Math.max(0, dataSize)} data bytes`,
    );
  }
  return Object.freeze({
    kind: "safetensors-entry",
    name,
    dtype,
    shape: Object.freeze([...shape]),
    start: dataStart + begin,
    byteLength: expectedBytes,
  });
}

function checkNoOverlap(
  entries: readonly SafetensorsEntry[],
  dataStart: number,
  fail: (d: string) => never,
): void {
  // Empty tensors first at equal offsets: a zero-length range overlaps nothing.
  const byStart = [...entries].sort((a, b) => a.start - b.start || a.byteLength - b.byteLength);
  for (let i = 1; i < byStart.length; i++) {
    const prev = byStart[i - 1];
    if (byStart[i].start < prev.start + prev.byteLength) {
      fail(
        `tensors ${prev.name} and ${byStart[i].name} overlap at data byte ` +
          `${byStart[i].start - dataStart}`,
      );
    }
  }
}
