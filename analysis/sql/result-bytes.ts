/**
 * The size of a result's rows as JSON text, estimated from DuckDB's own vectors before anything
 * is converted to JS values: string lengths are read from the vectors' headers and list sizes
 * from their entries, so one 600 MB string or a list of 100 million numbers is measured, and
 * refused, without being copied into the JS heap. The estimate counts each string's bytes (plus
 * quotes), each list's and struct's elements and separators, and a fixed width per number, date
 * or other fixed-size value; escapes a JSON encoder adds are not counted.
 *
 * @example
 * ```ts
 * import type { DuckDBResult } from "@duckdb/node-api";
 * import { rowBytes } from "./result-bytes.ts";
 * declare const result: DuckDBResult;
 *
 * const chunk = await result.fetchChunk();
 * if (chunk) {
 *   const sizes = rowBytes(chunk); // Float64Array, one estimate per row
 * }
 * ```
 */
import duckdb from "@duckdb/node-bindings";
import type { DuckDBDataChunk } from "@duckdb/node-api";

/** How a column's values are laid out, as far as their size goes. */
type Shape =
  | { readonly kind: "fixed"; readonly bytes: number }
  | { readonly kind: "string"; readonly perByte: number }
  | { readonly kind: "list"; readonly child: Shape }
  | { readonly kind: "array"; readonly size: number; readonly child: Shape }
  | { readonly kind: "struct"; readonly children: readonly Shape[]; readonly keyBytes: number };

/** JSON text of a number, date, time, UUID or the like: at most about this long. */
const FIXED_BYTES = 24;
const NULL_BYTES = 4;
const STRING_ENTRY_BYTES = 16;
const LIST_ENTRY_BYTES = 16;

const T = duckdb.Type;

// VARIANT is stored as this STRUCT (node-api's DuckDBVariantVector reads the same layout).
const VARIANT_SHAPE: Shape = {
  kind: "struct",
  keyBytes: 0,
  children: [
    { kind: "list", child: { kind: "string", perByte: 1 } },
    { kind: "list", child: { kind: "fixed", bytes: FIXED_BYTES } },
    { kind: "list", child: { kind: "fixed", bytes: FIXED_BYTES } },
    { kind: "string", perByte: 4 },
  ],
};

function shapeOf(type: duckdb.LogicalType): Shape {
  switch (duckdb.get_type_id(type)) {
    case T.VARCHAR:
      return { kind: "string", perByte: 1 };
    case T.BLOB:
    case T.GEOMETRY:
      // Bytes shown as \xNN escapes.
      return { kind: "string", perByte: 4 };
    case T.BIGNUM:
      return { kind: "string", perByte: 3 };
    case T.BIT:
      // One character per bit.
      return { kind: "string", perByte: 8 };
    case T.LIST:
      return { kind: "list", child: shapeOf(duckdb.list_type_child_type(type)) };
    case T.MAP:
      return {
        kind: "list",
        child: {
          kind: "struct",
          keyBytes: 0,
          children: [
            shapeOf(duckdb.map_type_key_type(type)),
            shapeOf(duckdb.map_type_value_type(type)),
          ],
        },
      };
    case T.ARRAY:
      return {
        kind: "array",
        size: duckdb.array_type_array_size(type),
        child: shapeOf(duckdb.array_type_child_type(type)),
      };
    case T.STRUCT: {
      const children: Shape[] = [];
      let keyBytes = 0;
      for (let i = 0; i < duckdb.struct_type_child_count(type); i++) {
        children.push(shapeOf(duckdb.struct_type_child_type(type, i)));
        keyBytes += duckdb.struct_type_child_name(type, i).length + 4;
      }
      return { kind: "struct", children, keyBytes };
    }
    case T.UNION: {
      // A STRUCT of the tag and one child per member.
      const children: Shape[] = [{ kind: "fixed", bytes: 0 }];
      for (let i = 0; i < duckdb.union_type_member_count(type); i++) {
        children.push(shapeOf(duckdb.union_type_member_type(type, i)));
      }
      return { kind: "struct", children, keyBytes: 0 };
    }
    case T.VARIANT:
      return VARIANT_SHAPE;
    default:
      return { kind: "fixed", bytes: FIXED_BYTES };
  }
}

/** Whether element `i` of a vector is valid (not NULL), from its validity mask. */
function validity(vector: duckdb.Vector, count: number): (i: number) => boolean {
  const mask = duckdb.vector_get_validity(vector, Math.ceil(count / 64) * 8);
  if (!mask) return () => true;
  return (i) => ((mask[i >> 3] >> (i & 7)) & 1) === 1;
}

/** Bytes of the elements `[start, end)` of one vector. */
type Sizer = (start: number, end: number) => number;

/**
 * A sizer of `vector` (`count` elements, laid out as `shape`): its buffers are read from DuckDB
 * once, then each range costs a loop over its elements (and theirs, for lists and structs).
 */
function sizer(vector: duckdb.Vector, shape: Shape, count: number): Sizer {
  switch (shape.kind) {
    case "fixed":
      return (start, end) => Math.max(0, end - start) * shape.bytes;
    case "string": {
      const data = duckdb.vector_get_data(vector, count * STRING_ENTRY_BYTES);
      const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
      const valid = validity(vector, count);
      return (start, end) => {
        let bytes = 0;
        for (let i = start; i < end; i++) {
          bytes += valid(i)
            ? view.getUint32(i * STRING_ENTRY_BYTES, true) * shape.perByte + 2
            : NULL_BYTES;
        }
        return bytes;
      };
    }
    case "list": {
      const data = duckdb.vector_get_data(vector, count * LIST_ENTRY_BYTES);
      const entries = new BigUint64Array(data.buffer, data.byteOffset, count * 2);
      const valid = validity(vector, count);
      const child = sizer(
        duckdb.list_vector_get_child(vector),
        shape.child,
        duckdb.list_vector_get_size(vector),
      );
      return (start, end) => {
        let bytes = 0;
        for (let i = start; i < end; i++) {
          if (!valid(i)) {
            bytes += NULL_BYTES;
            continue;
          }
          const offset = Number(entries[i * 2]);
          const length = Number(entries[i * 2 + 1]);
          bytes += 2 + length + child(offset, offset + length);
        }
        return bytes;
      };
    }
    case "array": {
      const child = sizer(duckdb.array_vector_get_child(vector), shape.child, count * shape.size);
      return (start, end) =>
        Math.max(0, end - start) * (2 + shape.size) + child(start * shape.size, end * shape.size);
    }
    case "struct": {
      const children = shape.children.map((childShape, i) =>
        sizer(duckdb.struct_vector_get_child(vector, i), childShape, count)
      );
      const own = 2 + shape.keyBytes + shape.children.length;
      return (start, end) => {
        let bytes = Math.max(0, end - start) * own;
        for (const child of children) bytes += child(start, end);
        return bytes;
      };
    }
  }
}

/**
 * The estimated JSON size of each row of `chunk`, in bytes, read from DuckDB's vectors without
 * converting a value.
 *
 * @example
 * ```ts
 * import type { DuckDBDataChunk } from "@duckdb/node-api";
 * import { rowBytes } from "./result-bytes.ts";
 * declare const chunk: DuckDBDataChunk;
 *
 * const [first] = rowBytes(chunk);
 * ```
 */
export function rowBytes(chunk: DuckDBDataChunk): Float64Array {
  const rows = chunk.rowCount;
  const sizes = new Float64Array(rows);
  for (let c = 0; c < chunk.columnCount; c++) {
    const vector = duckdb.data_chunk_get_vector(chunk.chunk, c);
    const size = sizer(vector, shapeOf(duckdb.vector_get_column_type(vector)), rows);
    for (let r = 0; r < rows; r++) sizes[r] += size(r, r + 1) + 1;
  }
  return sizes;
}
