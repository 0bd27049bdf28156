/**
 * A KV cache in host memory that decode extends in place, for runtimes whose device memory is the
 * host's (cpu, wasm). Each layer's keys and values are one Float32Array [rows, kvHeads, capacity,
 * headDim]; the first `width` columns hold positions (left-padded, as the device cache), the rest
 * is room that decode fills one column per token (`buildAppendDecodeGraph` returns only the new
 * token's keys/values). A splice (rows leaving or joining) copies the kept rows once into a new
 * cache sized for the rows' remaining tokens, so the cache is never copied per token, where the
 * device form (`buildDecodeGraph`) outputs the whole grown cache at every token.
 */
import { type HostTensor, hostTensor } from "../onnx/runtime/mod.ts";
import { ModelError } from "./errors.ts";
import { MODEL_IO } from "./graphs.ts";
import type { DecoderSpec } from "./parameters.ts";

/** Rows of one cache to copy into a splice, in order. */
export interface HostCacheRows {
  readonly cache: HostKvCache;
  /** Source row of each output row. */
  readonly rows: readonly number[];
}

/**
 * One host cache.
 *
 * @example
 * const joined = HostKvCache.fromPrefill(spec, result.host);
 * const running = HostKvCache.splice(spec, [{ cache: joined, rows: [0, 0, 1] }], width, room);
 * await decode.run({ ...params, ...running.feeds(), ... });
 * running.append(result.host);
 */
export class HostKvCache {
  /** Positions written so far (columns from 0). */
  width: number;

  private constructor(
    readonly rows: number,
    readonly kvHeads: number,
    readonly capacity: number,
    readonly headDim: number,
    width: number,
    /** Keys then values of each layer. */
    readonly keys: readonly Float32Array[],
    readonly values: readonly Float32Array[],
  ) {
    this.width = width;
  }

  /** The prefill's present keys/values [rows, kvHeads, seq, headDim] (full: no room). */
  static fromPrefill(spec: DecoderSpec, host: Readonly<Record<string, HostTensor>>): HostKvCache {
    const c = spec.config;
    const layer = (name: (i: number) => string) =>
      Array.from({ length: c.numLayers }, (_, i) => host[name(i)].data as Float32Array);
    const [rows, kvHeads, seq, headDim] = host[MODEL_IO.presentKey(0)].dims;
    return new HostKvCache(
      rows,
      kvHeads,
      seq,
      headDim,
      seq,
      layer(MODEL_IO.presentKey),
      layer(MODEL_IO.presentValue),
    );
  }

  /**
   * A new cache of `width` columns and room for `room` more: the given rows of each part, one
   * below the other, each row right-aligned (left-padded with zeros, which the attention mask
   * weighs 0, when its cache is narrower; leading columns dropped when wider), as the device
   * splice graph (`buildCacheSpliceGraph`) arranges them.
   */
  static splice(
    spec: DecoderSpec,
    parts: readonly HostCacheRows[],
    width: number,
    room: number,
  ): HostKvCache {
    const c = spec.config;
    const rows = parts.reduce((n, p) => n + p.rows.length, 0);
    const capacity = width + room;
    const fresh = () =>
      Array.from(
        { length: c.numLayers },
        () => new Float32Array(rows * c.numKvHeads * capacity * c.headDim),
      );
    const out = new HostKvCache(rows, c.numKvHeads, capacity, c.headDim, width, fresh(), fresh());
    let at = 0;
    for (const { cache, rows: from } of parts) {
      // Output column j holds source column j - shift.
      const shift = width - cache.width;
      const first = Math.max(0, -shift);
      const count = cache.width - first;
      for (const source of from) {
        for (let h = 0; h < c.numKvHeads; h++) {
          const src = ((source * c.numKvHeads + h) * cache.capacity + first) * c.headDim;
          const dst = ((at * c.numKvHeads + h) * capacity + first + shift) * c.headDim;
          for (let l = 0; l < c.numLayers; l++) {
            const n = count * c.headDim;
            out.keys[l].set(cache.keys[l].subarray(src, src + n), dst);
            out.values[l].set(cache.values[l].subarray(src, src + n), dst);
          }
        }
        at++;
      }
    }
    return out;
  }

  /** The decode feeds `past_key:i` / `past_value:i`, every column of the capacity. */
  feeds(): Record<string, HostTensor> {
    const dims = [this.rows, this.kvHeads, this.capacity, this.headDim];
    const feeds: Record<string, HostTensor> = {};
    this.keys.forEach((k, i) => feeds[MODEL_IO.pastKey(i)] = hostTensor("float32", dims, k));
    this.values.forEach((v, i) => feeds[MODEL_IO.pastValue(i)] = hostTensor("float32", dims, v));
    return feeds;
  }

  /** Writes a decode's new keys/values [rows, kvHeads, 1, headDim] as column `width`. */
  append(host: Readonly<Record<string, HostTensor>>): void {
    if (this.width >= this.capacity) {
      throw new ModelError(
        "kv cache",
        `is full (${this.capacity} columns); the splice that sized it undercounted the rows' tokens`,
      );
    }
    const d = this.headDim;
    const stride = this.capacity * d;
    const write = (into: Float32Array, data: Float32Array) => {
      // A plain loop: a subarray per (row, head) of 32 floats cost more than the copy.
      for (let rh = 0, from = 0; rh < this.rows * this.kvHeads; rh++) {
        const to = rh * stride + this.width * d;
        for (let j = 0; j < d; j++) into[to + j] = data[from++];
      }
    };
    this.keys.forEach((k, i) => write(k, host[MODEL_IO.presentKey(i)].data as Float32Array));
    this.values.forEach((v, i) => write(v, host[MODEL_IO.presentValue(i)].data as Float32Array));
    this.width++;
  }
}
