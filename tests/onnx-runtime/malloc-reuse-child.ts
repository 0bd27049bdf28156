/**
 * Child of malloc-reuse_test.ts: minor page faults per cycle of malloc, write and free, after the
 * first cycle, for two patterns. `run`: nine 8 MiB blocks held at once, then freed (a run's many
 * tensors); `plan`: one 110 MB block (what onnxruntime plans for the embedded model's 8 x 128
 * train step). Measured under glibc's defaults and after opening the cpu backend (which keeps
 * blocks up to 32 MiB). Then the faults of each of 10 steps of a supervised trainer at 8 x 128,
 * whose session keeps its plan in onnxruntime's arena (SessionOptions.fixedShape).
 * Prints `{"defaults":{"run":N,"plan":N},"runtime":{...},"trainerSteps":[N, ...]}`.
 */
import { embeddedModelConfig, initEmbeddedModel } from "../../adapters/model/embedded-model.ts";
import { decoderSpec } from "../../adapters/model/parameters.ts";
import { openSupervisedTrainer } from "../../adapters/model/supervised.ts";
import { hostTensor, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { minorPageFaults } from "../support/page-faults.ts";

const libc = Deno.dlopen("libc.so.6", {
  malloc: { parameters: ["usize"], result: "pointer" },
  free: { parameters: ["pointer"], result: "void" },
  memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
});
const MiB = 1024n * 1024n;
const PATTERNS = { run: Array<bigint>(9).fill(8n * MiB), plan: [110n * MiB] };

/** Faults per cycle of each pattern, over 5 cycles after one untimed. */
const faultsPerCycle = () =>
  Object.fromEntries(
    Object.entries(PATTERNS).map(([name, sizes]) => {
      const cycle = () => {
        const blocks = sizes.map((size) => {
          const block = libc.symbols.malloc(size);
          libc.symbols.memset(block, 1, size);
          return block;
        });
        for (const block of blocks) libc.symbols.free(block);
      };
      cycle();
      const before = minorPageFaults();
      for (let i = 0; i < 5; i++) cycle();
      return [name, (minorPageFaults() - before) / 5];
    }),
  );

const defaults = faultsPerCycle();
const runtime = await openRuntime("cpu", { threads: 1 });
const afterRuntime = faultsPerCycle();
const weights = initEmbeddedModel((_purpose, out) => out.fill(0.01));
const trainer = await openSupervisedTrainer(
  runtime,
  decoderSpec(embeddedModelConfig()),
  Object.fromEntries(weights.map((t) => [t.name, hostTensor("float32", t.shape, t.data)])),
);
const examples = Array.from(
  { length: 8 },
  (_, r) => ({
    tokens: Array.from({ length: 129 }, (_, i) => (i * 7 + r) % 250),
    lossSpans: [[1, 129] as const],
  }),
);
const trainerSteps: number[] = [];
for (let step = 0; step < 10; step++) {
  const before = minorPageFaults();
  await trainer.step(examples, { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 });
  trainerSteps.push(minorPageFaults() - before);
}
await trainer.release();
await runtime.close();
libc.close();
console.log(JSON.stringify({ defaults, runtime: afterRuntime, trainerSteps }));
