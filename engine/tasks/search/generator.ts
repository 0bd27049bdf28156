/**
 * Synthetic multi-hop search tasks: an invented world of people, cities and countries, one fact
 * per document, and questions that need one hop ("Where was Talo Venn born?") or two ("In which
 * country was Talo Venn born?"). Invented names keep a model from answering from memory, so the
 * searcher must retrieve. Everything is a pure function of the seed (keyed draws); people are
 * split between train, validation and test, so no question of one split concerns a person of
 * another.
 */
import { randomStream, uniformInt } from "../../random/mod.ts";

/** A search question with its gold answer. */
export interface SearchTask {
  readonly kind: "search-task";
  readonly id: string;
  readonly split: "train" | "validation" | "test";
  readonly problem: string;
  readonly answer: string;
  readonly hops: number;
}

/** The world: its documents (the retriever's corpus) and its questions per split. */
export interface SearchWorld {
  readonly documents: readonly string[];
  readonly tasks: readonly SearchTask[];
}

/** The syllables invented names are made of (pretraining drills draw names from them too). */
export const NAME_SYLLABLES: readonly string[] = [
  "ka",
  "lo",
  "mi",
  "ren",
  "sa",
  "tor",
  "vel",
  "zu",
  "an",
  "bri",
  "do",
  "fen",
];

/** An invalid generator option. */
export class SearchTaskOptionError extends Error {
  override name = "SearchTaskOptionError";
}

/** Questions per split, the corpus size to reach with distractor people, and the hop limits. */
export interface SearchWorldOptions {
  readonly seed: number;
  readonly splits: { readonly train: number; readonly validation: number; readonly test: number };
  readonly documents: number;
  readonly maxHops: number;
  /** Facts a question chains at least (default 1): 2 with `maxHops` 2 asks only two-hop ones. */
  readonly minHops?: number;
}

/**
 * Generates a world: one person per question (born in a city, which lies in a country), plus
 * distractor people nobody asks about until the corpus holds `documents` documents.
 *
 * @example
 * ```ts
 * const world = generateSearchWorld({
 *   seed: 1, splits: { train: 40, validation: 5, test: 5 }, documents: 200, maxHops: 2,
 * });
 * world.tasks.length; // 50
 * ```
 */
export function generateSearchWorld(options: SearchWorldOptions): SearchWorld {
  const { seed, splits, maxHops } = options;
  const asked = splits.train + splits.validation + splits.test;
  if (!Number.isInteger(asked) || asked < 1) {
    throw new SearchTaskOptionError(`splits must ask at least one question; got ${asked}`);
  }
  const people = Math.max(asked, options.documents - Math.max(3, Math.ceil(asked / 3)));
  if (maxHops !== 1 && maxHops !== 2) {
    throw new SearchTaskOptionError(`maxHops must be 1 or 2; got ${maxHops}`);
  }
  const minHops = options.minHops ?? 1;
  if (minHops !== 1 && minHops !== 2 || minHops > maxHops) {
    throw new SearchTaskOptionError(
      `minHops must be 1 or 2 and at most maxHops (${maxHops}); got ${minHops}`,
    );
  }
  const used = new Set<string>();
  // Names grow a syllable every 16 collisions, so the loop ends however many names are needed.
  const name = (purpose: string, parts: number) => {
    for (let attempt = 0;; attempt++) {
      const s = randomStream({ seed, purpose: `search-world:${purpose}`, sample: attempt });
      const length = parts + Math.floor(attempt / 16);
      const word = Array.from(
        { length },
        (_, i) => NAME_SYLLABLES[uniformInt(s, i, 0, NAME_SYLLABLES.length - 1)],
      ).join("");
      const cap = word[0].toUpperCase() + word.slice(1);
      if (!used.has(cap)) {
        used.add(cap);
        return cap;
      }
    }
  };
  const countries = Array.from(
    { length: Math.max(2, Math.ceil(people / 10)) },
    (_, i) => name(`country${i}`, 3),
  );
  const cities = Array.from({ length: Math.max(3, Math.ceil(asked / 3)) }, (_, i) => ({
    city: name(`city${i}`, 2),
    country: countries[i % countries.length],
  }));
  const documents: string[] = cities.map((c) => `${c.city} is a city in ${c.country}.`);
  const tasks: SearchTask[] = [];
  for (let p = 0; p < people; p++) {
    const person = `${name(`first${p}`, 2)} ${name(`last${p}`, 2)}`;
    const s = randomStream({ seed, purpose: "search-world:facts", prompt: p });
    const home = cities[uniformInt(s, 0, 0, cities.length - 1)];
    documents.push(`${person} was born in ${home.city}.`);
    if (p >= asked) continue;
    const hops = minHops === maxHops ? maxHops : 1 + uniformInt(s, 1, 0, 1);
    const split = p < splits.train
      ? "train"
      : p < splits.train + splits.validation
      ? "validation"
      : "test";
    tasks.push({
      kind: "search-task",
      id: `search-${seed}-${p}`,
      split,
      problem: hops === 1
        ? `In which city was ${person} born?`
        : `In which country was ${person} born?`,
      answer: hops === 1 ? home.city : home.country,
      hops,
    });
  }
  return Object.freeze({ documents: Object.freeze(documents), tasks: Object.freeze(tasks) });
}
