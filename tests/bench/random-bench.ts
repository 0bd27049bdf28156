/**
 * `deno task bench random`: throughput of the counter-based generator. Raw Philox4x32-10 blocks
 * against keyed draws (the cost of argument checks and word-to-float conversion on top), Box-Muller
 * normals for weight init, and token sampling from a 32k-vocabulary logit vector with and without
 * top-p (the per-token cost generation pays). Median of 3 rounds each.
 */
import { philoxInto } from "../../engine/random/philox.ts";
import { fillNormal, randomStream, sampleLogits, uniform53 } from "../../engine/random/mod.ts";

const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function rate(count: number, body: () => void): number {
  const runs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    body();
    runs.push(count / ((performance.now() - started) / 1000));
  }
  return median(runs);
}

/** Prints the suite's report. */
export function run(): Promise<void> {
  const n = 500_000;
  const block = new Uint32Array(4);
  const stream = randomStream({ seed: 1, purpose: "bench" });
  const raw = rate(n, () => {
    for (let i = 0; i < n; i++) philoxInto(block, i, 0, 1, 2, 3, 4);
  });
  let sink = 0;
  const keyed = rate(n, () => {
    for (let i = 0; i < n; i++) sink += uniform53(stream, i);
  });
  const normals = rate(n, () => void fillNormal(stream, new Float32Array(n)));
  // Peaked logits, like a language model's: normal with sd 3.
  const logits = fillNormal(
    randomStream({ seed: 2, purpose: "bench-logits" }),
    new Float32Array(32_000),
    {
      std: 3,
    },
  );
  const tokens = 50;
  const full = rate(tokens, () => {
    for (let i = 0; i < tokens; i++) {
      sink += sampleLogits(stream, i, logits, { temperature: 0.7, topP: 1 });
    }
  });
  const nucleus = rate(tokens, () => {
    for (let i = 0; i < tokens; i++) {
      sink += sampleLogits(stream, i, logits, { temperature: 0.7, topP: 0.95 });
    }
  });
  console.log(`philox4x32-10 blocks/s        ${(raw / 1e6).toFixed(2)} M`);
  console.log(
    `keyed uniform53 draws/s       ${(keyed / 1e6).toFixed(2)} M  (${
      (keyed / raw).toFixed(2)
    } x raw)`,
  );
  console.log(`fillNormal normals/s          ${(normals / 1e6).toFixed(2)} M`);
  console.log(`sampleLogits V=32000 top-p 1  ${(1000 / full).toFixed(2)} ms/token`);
  console.log(
    `sampleLogits V=32000 top-p .95 ${(1000 / nucleus).toFixed(2)} ms/token (${
      (full / nucleus).toFixed(2)
    } x top-p 1)`,
  );
  if (Number.isNaN(sink)) throw new Error("unreachable: keeps the loops from being optimized away");
  return Promise.resolve();
}
