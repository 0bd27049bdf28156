/**
 * Child of fused-ops_test.ts: on the backend named by the first argument, the tiny Qwen3 (per-head
 * q and k norms beside the layer norms) with every fusable part fused (RMSNorm, RoPE): the backend
 * trace (backend-trace.ts) with three supervised steps, as many times as the third argument says
 * (a second shows it repeats). Writes the JSON to the file named by the second argument. A child
 * process, so that the native webgpu backend gets its software Vulkan environment.
 */
import { decoderSpec, FUSED_OPS } from "../../adapters/model/parameters.ts";
import { type BackendName, openRuntime } from "../../adapters/onnx/runtime/mod.ts";
import { backendTrace, FUSABLE_HEADS } from "./backend-trace.ts";
import { tinyModel } from "./helpers.ts";

const [backend, out, times] = Deno.args as [BackendName, string, string];
const model = await tinyModel("Qwen3ForCausalLM", FUSABLE_HEADS);
const rt = await openRuntime(backend, { threads: 2 });
const spec = decoderSpec(model.config, null, { fused: FUSED_OPS });
const traces = [];
for (let i = 0; i < Number(times); i++) traces.push(await backendTrace(rt, spec, model, 3));
await rt.close();
await Deno.writeTextFile(out, JSON.stringify({ backend: rt.info.backend, traces }));
