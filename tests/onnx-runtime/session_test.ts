import assert from "node:assert/strict";
import { add, Graph, matMul, toOnnxModel } from "../../adapters/onnx/mod.ts";
import { createDeviceState, hostTensor, RuntimeError } from "../../adapters/onnx/runtime/mod.ts";
import { backends, testName, withRuntime } from "../onnx-train/backends.ts";

/** y = x W + x (x [2,2], W [2,2]): a state update x <- y when bound. */
function affine(): Uint8Array {
  const g = new Graph("affine");
  const x = g.input("x", "float32", [2, 2]);
  const w = g.input("w", "float32", [2, 2]);
  g.output(add(matMul(x, w), x), "y");
  g.output(matMul(x, w), "xw");
  return toOnnxModel(g);
}

const x0 = hostTensor("float32", [2, 2], [1, 2, 3, 4]);
const w = hostTensor("float32", [2, 2], [0.5, 0, 0, 2]);
// x W + x for x = [[1,2],[3,4]], W = diag(0.5, 2): [[1.5, 6], [4.5, 12]].
const y1 = [1.5, 6, 4.5, 12];
// Second application: [[1.5*1.5, 6*3], [4.5*1.5, 12*3]].
const y2 = [2.25, 18, 6.75, 36];

for (const { name, skip } of backends) {
  const opts = { ignore: skip !== null, sanitizeResources: false, sanitizeOps: false };

  Deno.test({
    ...opts,
    name: testName(`${name}: outputs kept on the device feed the next run`, skip),
    fn: () =>
      withRuntime(name, async (runtime) => {
        const session = await runtime.load(affine(), { keepOnDevice: ["y"] });
        assert.deepEqual([...session.inputNames].sort(), ["w", "x"]);
        const shared = runtime.upload(w);
        const first = await session.run({ x: x0, w: shared });
        assert.deepEqual(Object.keys(first.device), ["y"]);
        assert.deepEqual([...first.host.xw.data], [0.5, 4, 1.5, 8]);
        const y = first.device.y;
        assert.equal(y.location, name === "webgpu-web" ? "gpu-buffer" : "cpu");
        assert.deepEqual([...(await y.read()).data], y1);
        const second = await session.run({ x: y, w: shared });
        assert.deepEqual([...(await second.device.y.read()).data], y2);
        y.dispose();
        await assert.rejects(() => y.read(), /disposed/);
        second.device.y.dispose();
        assert.deepEqual([...(await shared.read()).data], [...w.data], "uploaded input unchanged");
        shared.dispose();
        await session.release();
      }),
  });

  Deno.test({
    ...opts,
    name: testName(`${name}: sessions loaded concurrently all work`, skip),
    fn: () =>
      withRuntime(name, async (runtime) => {
        const sessions = await Promise.all([1, 2, 3].map(() => runtime.load(affine())));
        for (const session of sessions) {
          assert.deepEqual([...(await session.run({ x: x0, w })).host.y.data], y1);
          await session.release();
        }
      }),
  });

  Deno.test({
    ...opts,
    name: testName(`${name}: device state replaces bound tensors run after run`, skip),
    fn: () =>
      withRuntime(name, async (runtime) => {
        const session = await runtime.load(affine(), { keepOnDevice: ["y"] });
        const state = createDeviceState(runtime);
        state.write("x", x0);
        const bind = [{ state: "x", output: "y" }];
        await state.run(session, { w }, bind);
        const out = await state.run(session, { w }, bind);
        assert.deepEqual([...out.xw.data], [0.75, 12, 2.25, 24], "second run saw the first y");
        assert.deepEqual([...(await state.read("x")).data], y2);
        await assert.rejects(() => state.run(session, { w, x: x0 }, bind), RuntimeError);
        state.release();
        await session.release();
      }),
  });
}

Deno.test("feeds that do not match the model inputs are named in the error", async () => {
  await withRuntime("cpu", async (runtime) => {
    const session = await runtime.load(affine());
    await assert.rejects(
      () => session.run({ x: x0, v: w }),
      (e: unknown) =>
        e instanceof RuntimeError && /missing \[w\]/.test(e.message) &&
        /unknown \[v\]/.test(e.message),
    );
    await assert.rejects(
      () => runtime.load(affine(), { keepOnDevice: ["z"] }),
      /keepOnDevice names z/,
    );
    await assert.rejects(() => runtime.load(new Uint8Array([1, 2, 3])), /could not load the model/);
    await withRuntime("wasm", async (other) => {
      const foreign = other.upload(w);
      await assert.rejects(() => session.run({ x: x0, w: foreign }), /another runtime/);
      foreign.dispose();
    });
    await session.release();
  });
});
