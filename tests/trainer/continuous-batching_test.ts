import assert from "node:assert/strict";
import { join } from "node:path";
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { mergeConfig, parseConfig, presetInput } from "../../engine/config/mod.ts";
import { runTraining } from "../../engine/trainer/train-loop.ts";
import {
  encodeCanonical,
  type NewEvent,
  openStore,
  sha256Hex,
  type StoredEvent,
} from "../../events/mod.ts";

const MAX_TOKENS = 48;

/** Every event after run.started (whose config names its own store file), byte for byte. */
const canonical = (events: readonly StoredEvent<NewEvent>[]) =>
  events.slice(1).map((e) => {
    const { json, tensors } = encodeCanonical(e.data);
    return `${e.id} ${e.type} ${json} ${sha256Hex(tensors)}`;
  });

/** One step of the smoke preset on the embedded model, long enough for turns to end early. */
async function run(storePath: string, continuousBatching = true): Promise<StoredEvent<NewEvent>[]> {
  const config = parseConfig(mergeConfig(presetInput("smoke"), {
    steps: 1,
    sampling: { temperature: 1, top_p: 1, max_tokens: MAX_TOKENS },
    runtime: { device: "cpu", threads: 1 },
    store: storePath,
  }));
  await using store = await openStore(storePath);
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    await runTraining(config, { store, runtime, runId: "cb", continuousBatching });
    const events: StoredEvent<NewEvent>[] = [];
    for await (const e of store.readStream("cb")) events.push(e as StoredEvent<NewEvent>);
    return events;
  } finally {
    await runtime.close();
  }
}

Deno.test("a run whose rows leave the decode batch at different steps reruns bit-identically", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const a = await run(join(tmp, "a.sqlite"));
    // The pretrained model ends its answers: some rows of a batch stop early, others run on.
    const lengths = a.flatMap((e) =>
      e.type === "turn.generated" ? [e.data.responseTokens.length] : []
    );
    assert.ok(lengths.some((n) => n < MAX_TOKENS), `no turn ended early: ${lengths}`);
    assert.ok(new Set(lengths).size > 2, `too few distinct lengths: ${lengths}`);
    const b = await run(join(tmp, "b.sqlite"));
    assert.deepEqual(canonical(b), canonical(a));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("continuous batching (turns join running batches) against whole waves of turns: the same tokens and events, logprobs to float32 rounding", async () => {
  const tmp = await Deno.makeTempDir();
  try {
    const joined = await run(join(tmp, "joined.sqlite"));
    const waves = await run(join(tmp, "waves.sqlite"), false);
    assert.equal(joined.length, waves.length);
    let turns = 0;
    let largest = 0;
    for (const [i, e] of joined.entries()) {
      const w = waves[i];
      assert.equal(e.type, w.type, `event ${i}`);
      if (e.type !== "turn.generated" || w.type !== "turn.generated") continue;
      turns++;
      const { logprobs, ...rest } = e.data;
      const { logprobs: waveLogprobs, ...waveRest } = w.data;
      // Tokens, text, finish reason, parsed action: all equal.
      assert.deepEqual(rest, waveRest, `turn event ${i}`);
      for (let t = 0; t < logprobs.length; t++) {
        largest = Math.max(largest, Math.abs(logprobs[t] - waveLogprobs[t]));
      }
    }
    assert.ok(turns > 0);
    // Other batch shapes round float32 sums differently; logprobs are O(1) values.
    assert.ok(largest < 1e-4, `largest logprob difference ${largest}`);
    // The update recomputes its own old logprobs, so nothing else depends on them.
    const others = (events: readonly StoredEvent<NewEvent>[]) =>
      canonical(events).filter((line) => !line.includes(" turn.generated "));
    assert.deepEqual(others(joined), others(waves));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
