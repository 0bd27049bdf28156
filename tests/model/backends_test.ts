import assert from "node:assert/strict";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import type { BackendName } from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, withRuntime } from "../onnx-train/backends.ts";
import { assertGenerationsAgree, backendTrace, TRACE_PROMPT } from "./backend-trace.ts";
import { maxAbsDiff, tinyModel } from "./helpers.ts";
import { referenceLogits } from "./reference.ts";

const model = await tinyModel("Qwen3ForCausalLM");
const spec = decoderSpec(model.config);

/**
 * Forward logits, greedy generation through the host and the device cache, and two supervised
 * steps' losses on one backend.
 */
const runAll = (name: BackendName) => withRuntime(name, (rt) => backendTrace(rt, spec, model, 2));

for (const { name, skip } of backends) {
  Deno.test({
    name: testName(`${name}: forward, greedy generation and train steps agree with cpu`, skip),
    ignore: skip !== null,
    fn: async () => {
      const got = await runAll(name);
      const vocab = model.config.vocabSize;
      referenceLogits(model.config, model.tensors, TRACE_PROMPT).forEach((row, t) => {
        const diff = maxAbsDiff(got.logits.slice(t * vocab, (t + 1) * vocab), row);
        assert.ok(diff < 2e-5, `${name} position ${t}: ${diff}`);
      });
      const cpu = name === "cpu" ? got : await runAll("cpu");
      assertGenerationsAgree(got, cpu, 2e-5);
      // Backends sum in different orders: the second loss (after one update) agrees to ~1e-5.
      assert.ok(maxAbsDiff(got.losses, cpu.losses) < 1e-4, `${got.losses} vs ${cpu.losses}`);
      assert.ok(got.losses[1] < got.losses[0]);
    },
  });
}
