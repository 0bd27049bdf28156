/**
 * A new event type does not make earlier runs' replays diverge: a run records the catalogue
 * generation of the code that wrote it (`run.started.catalogueGeneration`, absent = 1), and
 * replay counts a regenerated event of a type introduced later instead of comparing it, since
 * that code never wrote one. A run of the type's generation that lacks the event still diverges.
 */
import assert from "node:assert/strict";
import { z } from "zod";
import {
  createCatalogue,
  defineEvent,
  type NewEvent,
  openStore,
  runCatalogue,
  runEventDefinitions,
  runEventUpcasters,
} from "../../events/mod.ts";
import { compareSink } from "../../engine/replay/compare-sink.ts";
import { writeFakeRun } from "../support/fake-run.ts";
import { runSpec } from "../analysis/fixtures/fill-store.ts";

// A type the next generation of the code adds: one per step, as a new metric event might be.
const stepNote = defineEvent({
  type: "step.noted",
  schemaVersion: 1,
  schema: z.strictObject({ step: z.number().int(), note: z.string() }),
  coordinates: (d) => ({ step: d.step }),
  since: 2,
});
const nextCatalogue = createCatalogue([...runEventDefinitions, stepNote], runEventUpcasters);

Deno.test("catalogue generations: today's code is generation 1, a type's since raises it", () => {
  assert.equal(runCatalogue.generation, 1);
  assert.ok(runEventDefinitions.every((d) => d.since === 1));
  assert.equal(nextCatalogue.generation, 2);
});

Deno.test("replay counts a newer type's events of an older run instead of diverging", async () => {
  const dir = await Deno.makeTempDir({ prefix: "polyrl-newer-types-" });
  try {
    await using store = await openStore(`${dir}/events.sqlite`);
    const runId = "older-run";
    await writeFakeRun(store, runSpec({ runId, steps: 2 }));
    const logged = await Array.fromAsync(store.readStream(runId));
    // The run re-executed by the next generation's code: every logged event, and a note per step.
    const regenerated: NewEvent[] = logged.flatMap((e) => {
      const event = { type: e.type, data: e.data } as NewEvent;
      if (e.type !== "step.started") return [event];
      const { step } = e.data as { step: number };
      return [event, { type: "step.noted", data: { step, note: "new" } } as unknown as NewEvent];
    });
    const replay = async (generation: number) => {
      const sink = compareSink({
        runId,
        logged,
        mode: "exact",
        rtol: 1e-3,
        atol: 1e-4,
        generation,
        catalogue: nextCatalogue,
      });
      await sink.append(regenerated);
      return sink.finish({ from: 0, to: 1, end: true });
    };
    // Recorded by generation 1 (the fake run's run.started has no generation, as old runs):
    const older = await replay(1);
    assert.equal(older.firstDivergence, null);
    assert.equal(older.identical, older.compared);
    assert.equal(older.compared, logged.length - 1); // all but run.started
    assert.deepEqual(older.newerTypes, { "step.noted": 2 });
    // Recorded by generation 2, whose code writes the notes: their absence is a divergence.
    const newer = await replay(2);
    assert.equal(newer.firstDivergence?.reason, "not-logged");
    assert.equal(newer.firstDivergence?.type, "step.noted");
    assert.deepEqual(newer.newerTypes, {});
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
