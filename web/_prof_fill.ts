import { openStore } from "../events/mod.ts";
import { webRunEvents } from "../tests/web/fixtures/web-run.ts";
await using store = await openStore("/tmp/prof/events.sqlite");
for (
  const b of webRunEvents({
    runId: "big",
    seed: 1,
    estimator: "dr_mas",
    steps: 10000,
    prompts: 1,
    samples: 2,
    evalEvery: 50,
    spikeAt: 5000,
    nonFiniteAt: 3333,
  }, 5000)
) await store.append("big", b);
console.log("filled", await store.lastPosition());
