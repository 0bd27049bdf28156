import assert from "node:assert/strict";
import { bm25Retriever, tokenizeForSearch } from "../../adapters/search/bm25.ts";
import { generateSearchWorld } from "../../engine/tasks/search/generator.ts";

Deno.test("BM25 ranks by rare-term matches and breaks ties by document order", () => {
  const r = bm25Retriever([
    "Kalo was born in Mirenza.",
    "Mirenza is a city in Torvel.",
    "Sabri was born in Mirenza.",
    "The weather is fine.",
  ]);
  assert.deepEqual(r.search("Where was Kalo born?", 1), ["Kalo was born in Mirenza."]);
  // "mirenza" appears in three documents, "torvel" in one: the rare term wins.
  assert.deepEqual(r.search("mirenza torvel", 1), ["Mirenza is a city in Torvel."]);
  assert.deepEqual(r.search("nothing matches", 3), []);
  assert.deepEqual(tokenizeForSearch("Où est-il? 42"), ["où", "est", "il", "42"]);
});

Deno.test("BM25 scores follow the Okapi formula on a hand-computed case", () => {
  // Two docs: d0 = "a b" (len 2), d1 = "a a c" (len 3); avg len 2.5; k1 = 1.2, b = 0.75.
  // Query "c": only d1 matches. Query "a": idf(a) = ln(1 + (2-2+0.5)/(2+0.5)) = ln 1.2;
  // d0: tf 1, norm = 1.2 (1 - 0.75 + 0.75*2/2.5) = 1.02 -> 2.2/2.02 = 1.0891
  // d1: tf 2, norm = 1.2 (0.25 + 0.9) = 1.38 -> 4.4/3.38 = 1.3018 -> d1 ranks first.
  const r = bm25Retriever(["a b", "a a c"]);
  assert.deepEqual(r.search("a", 2), ["a a c", "a b"]);
  assert.deepEqual(r.search("c", 2), ["a a c"]);
});

Deno.test("the search world is deterministic, answerable from its documents, split by person", () => {
  const options = {
    seed: 3,
    splits: { train: 30, validation: 5, test: 5 },
    documents: 80,
    maxHops: 2,
  };
  const a = generateSearchWorld(options);
  assert.deepEqual(generateSearchWorld(options), a);
  assert.notDeepEqual(generateSearchWorld({ ...options, seed: 4 }).tasks, a.tasks);
  assert.equal(a.tasks.length, 40);
  assert.ok(a.documents.length >= 80);
  assert.deepEqual(
    ["train", "validation", "test"].map((s) => a.tasks.filter((t) => t.split === s).length),
    [30, 5, 5],
  );
  const r = bm25Retriever(a.documents);
  for (const task of a.tasks) {
    const person = task.problem.match(/was (\w+ \w+) born/)![1];
    const [birth] = r.search(`${person} born`, 1);
    assert.ok(birth.startsWith(`${person} was born in `), `retrieval found ${birth} for ${person}`);
    const city = birth.match(/born in (\w+)\./)![1];
    if (task.hops === 1) assert.equal(task.answer, city);
    else assert.ok(a.documents.includes(`${city} is a city in ${task.answer}.`));
  }
  assert.ok(a.tasks.some((t) => t.hops === 2) && a.tasks.some((t) => t.hops === 1));
});

Deno.test("minHops 2 asks only two-hop questions, about the same people with the same homes", () => {
  const options = {
    seed: 3,
    splits: { train: 30, validation: 5, test: 5 },
    documents: 80,
    maxHops: 2,
  };
  const mixed = generateSearchWorld(options);
  const twoHop = generateSearchWorld({ ...options, minHops: 2 });
  assert.deepEqual(twoHop.documents, mixed.documents);
  assert.ok(twoHop.tasks.every((t) => t.hops === 2));
  for (const [i, task] of mixed.tasks.entries()) {
    const same = twoHop.tasks[i];
    assert.equal(same.id, task.id);
    if (task.hops === 2) assert.deepEqual(same, task);
    else assert.ok(mixed.documents.includes(`${task.answer} is a city in ${same.answer}.`));
  }
  assert.deepEqual(generateSearchWorld({ ...options, minHops: 1 }), mixed);
  assert.throws(
    () => generateSearchWorld({ ...options, maxHops: 1, minHops: 2 }),
    /minHops must be 1, 2 or 3 and at most maxHops \(1\); got 2/,
  );
});

Deno.test("three hops: regions, answered by three top-1 queries; the two-hop world unchanged", () => {
  const options = { seed: 3, splits: { train: 30, validation: 5, test: 5 }, documents: 80 };
  const twoHop = generateSearchWorld({ ...options, maxHops: 2 });
  const world = generateSearchWorld({ ...options, maxHops: 3, minHops: 2 });
  // The same people and homes, then one region fact per country.
  assert.deepEqual(world.documents.slice(0, twoHop.documents.length), twoHop.documents);
  const regionFacts = world.documents.slice(twoHop.documents.length);
  assert.ok(regionFacts.length >= 2 && regionFacts.every((d) => / lies in \w+\.$/.test(d)));
  assert.deepEqual(new Set(world.tasks.map((t) => t.hops)), new Set([2, 3]));
  // The searcher's queries, one document each: person, city, country; the last fact is the answer.
  const r = bm25Retriever(world.documents);
  for (const task of world.tasks) {
    const person = task.problem.match(/was (\w+ \w+) born/)![1];
    const [birth] = r.search(person, 1);
    const city = birth.match(new RegExp(`^${person} was born in (\\w+)\\.$`))![1];
    const [inCountry] = r.search(city, 1);
    const country = inCountry.match(new RegExp(`^${city} is a city in (\\w+)\\.$`))![1];
    if (task.hops === 2) {
      assert.equal(task.answer, country);
      assert.match(task.problem, /^In which country was/);
      continue;
    }
    const [inRegion] = r.search(country, 1);
    assert.equal(inRegion, `${country} lies in ${task.answer}.`, task.problem);
    assert.match(task.problem, /^In which region was/);
  }
  assert.throws(
    () => generateSearchWorld({ ...options, maxHops: 4 }),
    /maxHops must be 1, 2 or 3; got 4/,
  );
});
