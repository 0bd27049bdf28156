import assert from "node:assert/strict";
import {
  RandomArgumentError,
  randomStream,
  shuffle,
  streamBlock,
  uniformInt,
} from "../../engine/random/mod.ts";

const s = randomStream({ seed: 5, purpose: "task-generator", prompt: 11 });

Deno.test("uniformInt follows the documented rejection rule word by word", () => {
  // span = 2^31 + 1: 2^32 mod span = 2^31 - 1, so limit = 2^32 - (2^31 - 1) = 2^31 + 1 and about
  // half of all words are rejected; the answer is the first accepted word (lanes 0, 1, ... of the
  // same index) mod span, shifted by min.
  const span = 2 ** 31 + 1;
  const limit = 2 ** 31 + 1;
  let rejectedSome = false;
  for (let index = 0; index < 50; index++) {
    let want: number | undefined;
    for (let lane = 0; want === undefined; lane++) {
      for (const x of streamBlock(s, index, lane, new Uint32Array(4))) {
        if (x < limit) {
          want = 10 + (x % span);
          break;
        }
        rejectedSome = true;
      }
    }
    assert.equal(uniformInt(s, index, 10, 10 + span - 1), want);
  }
  assert.ok(rejectedSome, "the case must exercise rejection");
});

Deno.test("uniformInt: a full 2^32 span returns word 0 unchanged; a one-value span returns it", () => {
  const w = streamBlock(s, 3, 0, new Uint32Array(4));
  assert.equal(uniformInt(s, 3, 0, 2 ** 32 - 1), w[0]);
  assert.equal(uniformInt(s, 3, -7, -7), -7);
});

Deno.test("uniformInt over a die is uniform (chi-square, 5 dof, 6000 draws)", () => {
  const counts = new Array(6).fill(0);
  for (let i = 0; i < 6000; i++) counts[uniformInt(s, i, 1, 6) - 1]++;
  const chi2 = counts.reduce((acc, c) => acc + (c - 1000) ** 2 / 1000, 0);
  // 20.5 is the 0.999 quantile of chi-square with 5 degrees of freedom.
  assert.ok(chi2 < 20.5, `chi2 ${chi2} counts ${counts}`);
});

Deno.test("uniformInt rejects empty or over-wide ranges, naming the bound", () => {
  assert.throws(
    () => uniformInt(s, 0, 5, 4),
    (e) => e instanceof RandomArgumentError && e.field === "max",
  );
  assert.throws(
    () => uniformInt(s, 0, 0, 2 ** 32),
    (e) => e instanceof RandomArgumentError && e.field === "max",
  );
  assert.throws(
    () => uniformInt(s, 0, 0.5, 4),
    (e) => e instanceof RandomArgumentError && e.field === "min",
  );
});

Deno.test("shuffle is a deterministic permutation that depends on the stream", () => {
  const items = Array.from({ length: 20 }, (_, i) => i);
  const a = shuffle(s, items);
  assert.deepEqual([...a].sort((x, y) => x - y), items);
  assert.deepEqual(shuffle(s, items), a);
  assert.notDeepEqual(a, items);
  assert.notDeepEqual(
    shuffle(randomStream({ seed: 6, purpose: "task-generator", prompt: 11 }), items),
    a,
  );
  assert.deepEqual(items, Array.from({ length: 20 }, (_, i) => i), "input untouched");
});
