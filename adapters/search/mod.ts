/**
 * Retrieval for the search workflow: an in-memory BM25 index over a task's documents.
 *
 * @example
 * ```ts
 * import { bm25Retriever } from "./mod.ts";
 *
 * const retrieve = bm25Retriever(["Paris is the capital of France.", "Rome is in Italy."]);
 * ```
 *
 * @module
 */
export { type Bm25Options, bm25Retriever, tokenizeForSearch } from "./bm25.ts";
