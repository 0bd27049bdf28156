/**
 * HostKvCache.splice in place: when rows leave (and columns are trimmed) the kept rows move down
 * within the old cache's arrays, and a later join fills the blocks after them; every float reads
 * as a fresh splice's would (padding and room zero), so decode sees the same cache.
 */
import assert from "node:assert/strict";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { HostKvCache } from "../../adapters/model/host-kv-cache.ts";
import { MODEL_IO } from "../../adapters/model/graphs.ts";
import { type HostTensor, hostTensor } from "../../adapters/onnx/runtime/mod.ts";
import { tinyModel } from "./helpers.ts";

const spec = decoderSpec((await tinyModel()).config);
const { numLayers, numKvHeads, headDim } = spec.config;

/** Keys/values [rows, kvHeads, seq, headDim] of every layer, each float distinct and nonzero. */
function present(rows: number, seq: number, salt: number): Record<string, HostTensor> {
  const out: Record<string, HostTensor> = {};
  const size = rows * numKvHeads * seq * headDim;
  for (let l = 0; l < numLayers; l++) {
    for (
      const [name, kind] of [[MODEL_IO.presentKey(l), 1], [MODEL_IO.presentValue(l), 2]] as const
    ) {
      const data = Float32Array.from(
        { length: size },
        (_, i) => salt + kind * 1e5 + l * 1e4 + i + 1,
      );
      out[name] = hostTensor("float32", [rows, numKvHeads, seq, headDim], data);
    }
  }
  return out;
}

/** The float of (layer, row, head, column, d) of a cache's keys and values, as plain arrays. */
function snapshot(cache: HostKvCache): number[][] {
  return [...cache.keys, ...cache.values].map((a) => Array.from(a));
}

/** What a splice must hold: each output row's source column j - shift, zero elsewhere. */
function expected(
  parts: { cache: number[][]; width: number; capacity: number; rows: number[] }[],
  width: number,
  capacity: number,
): number[][] {
  const rows = parts.reduce((n, p) => n + p.rows.length, 0);
  return Array.from({ length: 2 * numLayers }, (_, a) => {
    const out = new Array<number>(rows * numKvHeads * capacity * headDim).fill(0);
    let at = 0;
    for (const part of parts) {
      const shift = width - part.width;
      for (const source of part.rows) {
        for (let h = 0; h < numKvHeads; h++) {
          for (let j = Math.max(0, shift); j < width; j++) {
            for (let d = 0; d < headDim; d++) {
              out[((at * numKvHeads + h) * capacity + j) * headDim + d] = part
                .cache[a][((source * numKvHeads + h) * part.capacity + j - shift) * headDim + d];
            }
          }
        }
        at++;
      }
    }
    return out;
  });
}

Deno.test("a splice where rows only leave reuses the cache's arrays and reads as a fresh one", () => {
  const prefill = HostKvCache.fromPrefill(spec, present(4, 5, 0));
  const running = HostKvCache.splice(spec, [{ cache: prefill, rows: [0, 1, 2, 3] }], 5, 4);
  running.append(present(4, 1, 7e5));
  running.append(present(4, 1, 8e5));
  const before = snapshot(running);

  // Rows 1 and 3 stay, the leading column is trimmed, room shrinks: in place.
  const left = HostKvCache.splice(spec, [{ cache: running, rows: [1, 3] }], 6, 2);
  assert.equal(left.keys[0].buffer, running.keys[0].buffer, "the kept rows stay in the arrays");
  assert.deepEqual(
    snapshot(left),
    expected([{ cache: before, width: 7, capacity: 9, rows: [1, 3] }], 6, 8),
  );

  // A newcomer from a prefill joins below them, right-aligned: still in the same arrays.
  const kept = snapshot(left);
  const joined = HostKvCache.splice(
    spec,
    [{ cache: left, rows: [0, 1] }, { cache: prefill, rows: [2] }],
    6,
    1,
  );
  assert.equal(joined.keys[0].buffer, running.keys[0].buffer, "the join fits in the arrays");
  assert.deepEqual(
    snapshot(joined),
    expected(
      [
        { cache: kept, width: 6, capacity: 8, rows: [0, 1] },
        { cache: snapshot(prefill), width: 5, capacity: 5, rows: [2] },
      ],
      6,
      7,
    ),
  );

  // A splice that needs more columns than the arrays hold allocates.
  const grown = HostKvCache.splice(spec, [{ cache: joined, rows: [0, 1, 2] }], 6, 4);
  assert.notEqual(grown.keys[0].buffer, joined.keys[0].buffer);
});
