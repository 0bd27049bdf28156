/**
 * Synthetic multi-hop search tasks: an invented world of people, cities, countries and (in worlds
 * of three hops) regions, one fact per document, and questions that need one hop ("In which city
 * was Talo Venn born?"), two ("In which country ...?") or three ("In which region ...?"). Invented
 * names keep a model from answering from memory, so the searcher must retrieve. Everything is a
 * pure function of the seed (keyed draws); people are split between train, validation and test,
 * so no question of one split concerns a person of another.
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
  /** Facts a question chains at most: 1, 2 or 3 (only a world of 3 has regions). */
  readonly maxHops: number;
  /** Facts a question chains at least (default 1): 2 with `maxHops` 2 asks only two-hop ones. */
  readonly minHops?: number;
}

/**
 * Generates a world: one person per question (born in a city, which lies in a country, which in
 * a world of three hops lies in a region), plus distractor people nobody asks about until the
 * corpus holds `documents` documents. A world of one or two hops has no regions, and its people,
 * homes and questions do not depend on `maxHops` beyond which questions it asks.
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
  if (!HOPS.includes(maxHops)) {
    throw new SearchTaskOptionError(`maxHops must be 1, 2 or 3; got ${maxHops}`);
  }
  const minHops = options.minHops ?? 1;
  if (!HOPS.includes(minHops) || minHops > maxHops) {
    throw new SearchTaskOptionError(
      `minHops must be 1, 2 or 3 and at most maxHops (${maxHops}); got ${minHops}`,
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
  const homes: { person: string; city: string; country: string; hops: number }[] = [];
  for (let p = 0; p < people; p++) {
    const person = `${name(`first${p}`, 2)} ${name(`last${p}`, 2)}`;
    const s = randomStream({ seed, purpose: "search-world:facts", prompt: p });
    const home = cities[uniformInt(s, 0, 0, cities.length - 1)];
    documents.push(`${person} was born in ${home.city}.`);
    if (p < asked) {
      homes.push({ person, ...home, hops: minHops + uniformInt(s, 1, 0, maxHops - minHops) });
    }
  }
  // Regions are named after everyone else, so that the people and homes are those of the same
  // seed's world of two hops. A region's fact is shorter than a city's ("X lies in Y." against
  // "Z is a city in X."), so BM25 ranks it first for a query that names the country.
  const regionOf = new Map<string, string>();
  if (maxHops === 3) {
    const regions = Array.from(
      { length: Math.max(2, Math.ceil(countries.length / 4)) },
      (_, i) => name(`region${i}`, 3),
    );
    for (const [i, country] of countries.entries()) {
      regionOf.set(country, regions[i % regions.length]);
      documents.push(`${country} lies in ${regions[i % regions.length]}.`);
    }
  }
  const tasks = homes.map(({ person, city, country, hops }, p): SearchTask => ({
    kind: "search-task",
    id: `search-${seed}-${p}`,
    split: p < splits.train
      ? "train"
      : p < splits.train + splits.validation
      ? "validation"
      : "test",
    problem: `In which ${HOP_NOUN[hops - 1]} was ${person} born?`,
    answer: hops === 1 ? city : hops === 2 ? country : regionOf.get(country)!,
    hops,
  }));
  return Object.freeze({ documents: Object.freeze(documents), tasks: Object.freeze(tasks) });
}

/** The hop counts a world can ask. */
const HOPS: readonly number[] = [1, 2, 3];

/** What a question of 1, 2 or 3 hops asks for. */
const HOP_NOUN = ["city", "country", "region"] as const;
