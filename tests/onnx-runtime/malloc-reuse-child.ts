/**
 * Child of malloc-reuse_test.ts: minor page faults per cycle of malloc, write and free of a
 * 110 MB block (the size onnxruntime plans for the embedded model's 8 x 128 train step), first
 * after opening the cpu backend (which sets glibc-malloc.ts's thresholds), then with glibc's
 * defaults put back. Prints `{"kept":N,"defaults":N}`: faults per cycle after the first.
 */
import { openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { minorPageFaults } from "../support/page-faults.ts";

const libc = Deno.dlopen("libc.so.6", {
  malloc: { parameters: ["usize"], result: "pointer" },
  free: { parameters: ["pointer"], result: "void" },
  memset: { parameters: ["pointer", "i32", "usize"], result: "pointer" },
  mallopt: { parameters: ["i32", "i32"], result: "i32" },
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
await (await openRuntime("cpu", { threads: 1 })).close();
const kept = faultsPerCycle();
// glibc's defaults (malloc.h: M_MMAP_THRESHOLD -3, M_TRIM_THRESHOLD -1), 128 KiB each.
libc.symbols.mallopt(-3, 128 * 1024);
libc.symbols.mallopt(-1, 128 * 1024);
const defaults = faultsPerCycle();
libc.close();
console.log(JSON.stringify({ kept, defaults }));
