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

/** One step of the smoke preset on the embedded model, long enough for turns to end early. */
async function run(storePath: string): Promise<StoredEvent<NewEvent>[]> {
  const config = parseConfig(mergeConfig(presetInput("smoke"), {
    steps: 1,
    sampling: { temperature: 1, top_p: 1, max_tokens: MAX_TOKENS },
    runtime: { device: "cpu", threads: 1 },
    store: storePath,
  }));
  await using store = await openStore(storePath);
  const runtime = await openRuntime("cpu", { threads: 1 });
  try {
    await runTraining(config, { store, runtime, runId: "cb" });
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
    // Every event after run.started (whose config names the other store file), byte for byte.
    const canonical = (events: StoredEvent<NewEvent>[]) =>
      events.slice(1).map((e) => {
        const { json, tensors } = encodeCanonical(e.data);
        return `${e.id} ${e.type} ${json} ${sha256Hex(tensors)}`;
      });
    assert.deepEqual(canonical(b), canonical(a));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});
