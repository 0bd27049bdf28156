import { createHash } from "node:crypto";
const tensors = new Uint8Array(1500).map((_, i) => i * 13);
const json = '{"data":' + "x".repeat(900) + "}";
const prev = "ab".repeat(32);
let scratch = new Uint8Array(65536);
const enc = new TextEncoder();
const N = 4000;
const variants: Record<string, () => string> = {
  three: () => createHash("sha256").update(Buffer.from(prev, "hex")).update(json, "utf8").update(tensors).digest("hex"),
  scratch: () => {
    let n = 0;
    for (let i = 0; i < 32; i++) scratch[i] = parseInt(prev.substr(i * 2, 2), 16);
    n = 32 + enc.encodeInto(json, scratch.subarray(32)).written;
    scratch.set(tensors, n); n += tensors.length;
    return createHash("sha256").update(scratch.subarray(0, n)).digest("hex");
  },
  strOnly: () => createHash("sha256").update(prev + json).digest("hex"),
};
for (let r = 0; r < 3; r++) {
  const line: string[] = [];
  for (const [k, f] of Object.entries(variants)) {
    const s = performance.now();
    for (let i = 0; i < N; i++) f();
    line.push(`${k} ${((performance.now() - s) / N * 1000).toFixed(1)}`);
  }
  console.log(line.join("  "), variants.three() === variants.scratch());
}
