import assert from "node:assert/strict";
import { philox4x32, RandomArgumentError } from "../../engine/random/mod.ts";

// Random123 tests/kat_vectors (DEShawResearch/random123 @ 9545ff64, lines 27-29), columns
// CTR (4 words), KEY (2 words), EXPECTED (4 words); read from the upstream file, not recalled.
const KAT: ReadonlyArray<{
  name: string;
  ctr: [number, number, number, number];
  key: [number, number];
  want: [number, number, number, number];
}> = [
  {
    name: "zero counter and key",
    ctr: [0, 0, 0, 0],
    key: [0, 0],
    want: [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
  },
  {
    name: "all ones",
    ctr: [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    key: [0xffffffff, 0xffffffff],
    want: [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
  },
  {
    name: "digits of pi",
    ctr: [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
    key: [0xa4093822, 0x299f31d0],
    want: [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
  },
];

for (const { name, ctr, key, want } of KAT) {
  Deno.test(`philox4x32-10 known answer: ${name}`, () => {
    assert.deepEqual(philox4x32(ctr, key), want);
  });
}

Deno.test("philox4x32 rejects words outside uint32, naming the word", () => {
  assert.throws(
    () => philox4x32([0, 0, 2 ** 32, 0], [0, 0]),
    (e) => e instanceof RandomArgumentError && e.field === "counter[2]",
  );
  assert.throws(
    () => philox4x32([0, 0, 0, 0], [0, -1]),
    (e) => e instanceof RandomArgumentError && e.field === "key[1]",
  );
});

Deno.test("philox4x32 is a different permutation per key (one-bit key change)", () => {
  const a = philox4x32([1, 2, 3, 4], [5, 6]);
  const b = philox4x32([1, 2, 3, 4], [5, 7]);
  assert.notDeepEqual(a, b);
});
