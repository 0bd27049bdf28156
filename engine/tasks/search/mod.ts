/** Synthetic multi-hop search tasks for the search workflow. */
export {
  generateSearchWorld,
  NAME_SYLLABLES,
  type SearchTask,
  SearchTaskOptionError,
  type SearchWorld,
  type SearchWorldOptions,
} from "./generator.ts";
export { exactMatch, normalizeAnswer } from "./exact-match.ts";
