/**
 * Child of malloc-reuse_test.ts: minor page faults per cycle of malloc, write and free of a
 * 110 MB block (the size onnxruntime plans for the embedded model's 8 x 128 train step), after
 * opening the cpu backend (which leaves glibc's defaults) and again after opening a supervised
 * trainer on it (which sets glibc-malloc.ts's thresholds). Prints `{"runtime":N,"trainer":N}`:
 * faults per cycle after the first.
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
const BLOCK = 110n * 1024n * 1024n;
const faultsPerCycle = () => {
  const cycle = () => {
    const block = libc.symbols.malloc(BLOCK);
    libc.symbols.memset(block, 1, BLOCK);
    libc.symbols.free(block);
  };
  cycle();
  const before = minorPageFaults();
  for (let i = 0; i < 5; i++) cycle();
  return (minorPageFaults() - before) / 5;
};

const runtime = await openRuntime("cpu", { threads: 1 });
const afterRuntime = faultsPerCycle();
const weights = initEmbeddedModel((_purpose, out) => out.fill(0.01));
const trainer = await openSupervisedTrainer(
  runtime,
  decoderSpec(embeddedModelConfig()),
  Object.fromEntries(weights.map((t) => [t.name, hostTensor("float32", t.shape, t.data)])),
);
const afterTrainer = faultsPerCycle();
await trainer.release();
await runtime.close();
libc.close();
console.log(JSON.stringify({ runtime: afterRuntime, trainer: afterTrainer }));
