/**
 * A KV cache in host memory that decode extends in place, for runtimes whose device memory is the
 * host's (cpu, wasm). Each layer's keys and values are one Float32Array [rows, kvHeads, capacity,
 * headDim]; the first `width` columns hold positions (left-padded, as the device cache), the rest
 * is room that decode fills one column per token (`buildAppendDecodeGraph` returns only the new
 * token's keys/values). A splice (rows leaving or joining) copies the kept rows once into a cache
 * sized for the rows' remaining tokens, so the cache is never copied per token, where the device
 * form (`buildDecodeGraph`) outputs the whole grown cache at every token. When rows only leave or
 * columns are trimmed, the splice moves the kept rows down within the old cache's arrays instead
 * of allocating new ones (bit-identical contents, no garbage left for V8's GC).
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
 * ```ts
 * import type { HostTensor, Session } from "../onnx/runtime/mod.ts";
 * import { HostKvCache } from "./host-kv-cache.ts";
 * import type { DecoderSpec } from "./parameters.ts";
 * import type { ParamFeeds } from "./weights.ts";
 *
 * declare const spec: DecoderSpec;
 * declare const prefill: Session, decode: Session; // buildPrefillGraph, buildAppendDecodeGraph
 * declare const params: ParamFeeds;
 * declare const prompts: Record<string, HostTensor>; // tokens and attention mask of two prompts
 * declare const next: Record<string, HostTensor>; // next tokens, mask over cache and them
 * const prefilled = await prefill.run({ ...params, ...prompts });
 * const joined = HostKvCache.fromPrefill(spec, prefilled.host);
 * const running = HostKvCache.splice(spec, [{ cache: joined, rows: [0, 0, 1] }], joined.width, 32);
 * const result = await decode.run({ ...params, ...running.feeds(), ...next });
 * running.append(result.host);
 * ```
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
    /** Whether `keys`/`values` own their buffers (a splice's), so a later splice may reuse them. */
    readonly owned: boolean,
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
      false,
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
    const size = rows * c.numKvHeads * capacity * c.headDim;
    const inPlace = parts.length > 0 && fitsInPlace(parts, width, capacity, size);
    const views = (arrays: readonly Float32Array[]) =>
      arrays.map((a) => new Float32Array(a.buffer, a.byteOffset, size));
    const fresh = () => Array.from({ length: c.numLayers }, () => new Float32Array(size));
    const out = inPlace
      ? new HostKvCache(
        rows,
        c.numKvHeads,
        capacity,
        c.headDim,
        width,
        views(parts[0].cache.keys),
        views(parts[0].cache.values),
        true,
      )
      : new HostKvCache(rows, c.numKvHeads, capacity, c.headDim, width, fresh(), fresh(), true);
    const block = capacity * c.headDim;
    let at = 0;
    for (const [index, { cache, rows: from }] of parts.entries()) {
      // Output column j holds source column j - shift.
      const shift = width - cache.width;
      const first = Math.max(0, -shift);
      const count = cache.width - first;
      const n = count * c.headDim;
      // In place, the first part's rows move down within its own arrays (see `fitsInPlace`);
      // every other output block still holds stale floats, zeroed so that the padding and the
      // room read exactly as in a fresh cache.
      const moving = inPlace && index === 0;
      for (const source of from) {
        for (let h = 0; h < c.numKvHeads; h++) {
          const src = ((source * c.numKvHeads + h) * cache.capacity + first) * c.headDim;
          const base = (at * c.numKvHeads + h) * block;
          const dst = base + (first + shift) * c.headDim;
          for (let l = 0; l < c.numLayers; l++) {
            for (
              const [into, data] of [[out.keys[l], cache.keys[l]], [out.values[l], cache.values[l]]]
            ) {
              if (moving) {
                data.copyWithin(dst, src, src + n);
                into.fill(0, dst + n, base + block);
              } else {
                if (inPlace) into.fill(0, base, base + block);
                into.set(data.subarray(src, src + n), dst);
              }
            }
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

/**
 * Whether a splice can build its cache in the first part's own arrays (no allocation, nothing
 * left for the GC): when rows leave or columns are trimmed, the kept rows keep their order and
 * move down, each into a block no larger than before (`width` and `capacity` at most the
 * source's), so copying them in order never overwrites a source block not yet copied; the
 * other parts' rows (newcomers) then fill the blocks after them, which must fit in the arrays
 * (a splice's own, never a prefill's, whose buffers onnxruntime may share).
 */
function fitsInPlace(
  parts: readonly HostCacheRows[],
  width: number,
  capacity: number,
  size: number,
): boolean {
  const { cache, rows } = parts[0];
  const fits = (a: Float32Array) => a.buffer.byteLength - a.byteOffset >= size * 4;
  return cache.owned && width <= cache.width && capacity <= cache.capacity &&
    rows.every((source, at) => source >= at && (at === 0 || source > rows[at - 1])) &&
    parts.slice(1).every((p) => p.cache !== cache) &&
    cache.keys.every(fits) && cache.values.every(fits);
}
