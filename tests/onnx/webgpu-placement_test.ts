/**
 * The compiler's gradient graphs run on the WebGPU EP: every compute node is placed on WebGPU
 * (onnxruntime keeps only small shape-related nodes on the CPU by design) and the results match
 * onnxruntime-node CPU. Needs a WebGPU adapter (CI: Mesa lavapipe); skipped without one.
 */
import assert from "node:assert/strict";

const adapter = await navigator.gpu?.requestAdapter().catch(() => null);

Deno.test({
  name: "webgpu: policy gradient graph runs on the WebGPU EP and matches CPU",
  ignore: !adapter,
  async fn() {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", new URL("./webgpu-placement-child.ts", import.meta.url).pathname],
      stdout: "piped",
      stderr: "piped",
    });
    const { code, stdout, stderr } = await child.output();
    const log = new TextDecoder().decode(stderr);
    assert.equal(code, 0, log.slice(-2000));
    const result = JSON.parse(new TextDecoder().decode(stdout).trim().split("\n").at(-1)!);
    const diffs = Object.entries(result.maxDiff as Record<string, number>);
    assert.ok(diffs.length > 0, "no output compared");
    for (const [name, diff] of diffs) {
      assert.ok(diff < 1e-5, `${name} differs from CPU by ${diff}`);
    }
    const placed = placements(log);
    assert.ok((placed.get("WebGpuExecutionProvider") ?? []).length > 40, "few nodes on WebGPU");
    // ORT moves tiny shape computations (Concat of dims, a Slice of int32 token ids) to the CPU
    // on purpose; anything else there would be a kernel WebGPU lacks.
    const shapeLike = new Set([
      "Concat",
      "Slice",
      "Shape",
      "Reshape",
      "Unsqueeze",
      "Squeeze",
      "Mul",
    ]);
    for (const op of placed.get("CPUExecutionProvider") ?? []) {
      assert.ok(shapeLike.has(op), `${op} fell back to the CPU`);
    }
  },
});

/** Op types per execution provider, from ORT's verbose "Node placements" log. */
function placements(log: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of log.split("\n")) {
    const header = line.match(/Node\(s\) placed on \[(\w+)\]/);
    if (header) {
      current = [];
      out.set(header[1], current);
      continue;
    }
    const node = line.match(/VerifyEachNodeIsAssignedToAnEp\]\s{3}(\w+) \(/);
    if (node && current) current.push(node[1]);
    else if (!line.includes("VerifyEachNodeIsAssignedToAnEp")) current = undefined;
  }
  return out;
}
