/**
 * An Okapi BM25 retriever over an in-memory corpus: the searcher agent's tool in the search
 * workflow. Small corpora (thousands of short documents) only; ties break by document order so
 * results are deterministic.
 */

/** BM25 parameters: term-frequency saturation `k1` and length normalization `b`. */
export interface Bm25Options {
  readonly k1: number;
  readonly b: number;
}

const DEFAULTS: Bm25Options = { k1: 1.2, b: 0.75 };

/** Lower-cased word tokens; punctuation separates words. */
export function tokenizeForSearch(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * Builds a retriever over `documents`.
 *
 * @example
 * ```ts
 * import { bm25Retriever } from "./bm25.ts";
 *
 * const r = bm25Retriever(["Paris is in France.", "Rome is in Italy."]);
 * r.search("where is paris", 1); // ["Paris is in France."]
 * ```
 */
export function bm25Retriever(documents: readonly string[], options: Bm25Options = DEFAULTS) {
  const docs = documents.map((d) => {
    const terms = tokenizeForSearch(d);
    const tf = new Map<string, number>();
    for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
    return { length: terms.length, tf };
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const avgLength = docs.reduce((n, d) => n + d.length, 0) / Math.max(1, docs.length);
  const idf = (t: string) => {
    const n = df.get(t) ?? 0;
    return Math.log(1 + (docs.length - n + 0.5) / (n + 0.5));
  };
  return Object.freeze({
    /** The `topK` best-scoring documents with a positive score, best first. */
    search(query: string, topK: number): readonly string[] {
      const terms = [...new Set(tokenizeForSearch(query))];
      const scored = docs.map((d, i) => {
        let score = 0;
        for (const t of terms) {
          const f = d.tf.get(t) ?? 0;
          if (f === 0) continue;
          const norm = options.k1 * (1 - options.b + options.b * d.length / avgLength);
          score += idf(t) * f * (options.k1 + 1) / (f + norm);
        }
        return { i, score };
      }).filter((s) => s.score > 0);
      scored.sort((a, b) => b.score - a.score || a.i - b.i);
      return scored.slice(0, topK).map((s) => documents[s.i]);
    },
  });
}
