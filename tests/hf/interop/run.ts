/**
 * Manual interop check against the reference Python stack (not part of `deno task test`: CI has no
 * torch). Needs a Python with torch, transformers, peft, tokenizers and safetensors installed
 * offline, e.g. from local wheels:
 *
 *   python3 -m venv /tmp/hfvenv
 *   /tmp/hfvenv/bin/pip install --no-index --find-links DIR torch transformers peft
 *   PYTHON=/tmp/hfvenv/bin/python deno run -A tests/hf/interop/run.ts
 *
 * Checks, in both directions: our fixtures load in transformers with logits equal to
 * `referenceForward`; our tokenizer.json files give the Rust tokenizers' ids and AutoTokenizer's
 * chat prompts; our PEFT adapter loads in peft with identical A/B; a sharded BF16 model saved by
 * transformers loads here with logits equal to transformers'; our re-save of it loads back there.
 */
import { join } from "node:path";
import { EMBEDDED_TOKENIZER_DIR } from "../../../adapters/hf/embedded-tokenizer.ts";
import { loadHfModel } from "../../../adapters/hf/load-model.ts";
import { saveLoraAdapter } from "../../../adapters/hf/peft-adapter.ts";
import { saveHfModel } from "../../../adapters/hf/save-model.ts";
import { namedTensor } from "../../../adapters/hf/tensor.ts";
import { loadTokenizer } from "../../../adapters/hf/tokenizer.ts";
import { referenceForward } from "../reference-forward.ts";
import { writeTinyCheckpoint } from "../tiny-checkpoint.ts";

const ARCHITECTURES = ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "LlamaForCausalLM"] as const;
const TEXTS = [" the 12 cats", "naïve 😀\n\tx", "<|im_start|>user\nWhat is 12+30?<|im_end|>\n"];
const CHAT = [{ role: "system", content: "S" }, { role: "user", content: "2+2=" }];

const python = Deno.env.get("PYTHON") ?? "python3";
const root = await Deno.makeTempDir({ prefix: "polyrl-interop-" });
const script = new URL("./check_hf_stack.py", import.meta.url).pathname;

async function runPython(phase: string): Promise<void> {
  const { code } = await new Deno.Command(python, {
    args: [script, phase, root],
    env: { HF_HUB_OFFLINE: "1", TRANSFORMERS_OFFLINE: "1" },
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (code !== 0) throw new Error(`python ${phase} failed with exit code ${code}`);
}

const expected: Record<string, unknown> = {};
for (const architecture of ARCHITECTURES) {
  const dir = join(root, architecture);
  await Deno.mkdir(dir);
  // Llama with both bias options on, so every optional tensor kind is exercised somewhere.
  const llamaBias = { attention_bias: true, mlp_bias: true };
  await writeTinyCheckpoint(dir, {
    architecture,
    configOverrides: architecture === "LlamaForCausalLM" ? llamaBias : {},
  });
  const m = await loadHfModel(dir);
  const tokens = m.tokenizer!.encode("<|im_start|>user\n the 12+30=<|im_end|>");
  expected[architecture] = {
    tokens,
    logits: referenceForward(m.config, m.tensors, tokens).map((row) => [...row]),
    encodings: TEXTS.map((t) => m.tokenizer!.encode(t)),
    chat: m.tokenizer!.chatTemplate!.render(CHAT),
  };
}
const embedded = await loadTokenizer(EMBEDDED_TOKENIZER_DIR.pathname);
expected.embedded = {
  dir: EMBEDDED_TOKENIZER_DIR.pathname,
  encodings: TEXTS.map((t) => embedded.encode(t)),
  chat: embedded.chatTemplate!.render(CHAT),
};
const modules = new Map(
  [0, 1].flatMap((layer) =>
    ([["q_proj", 16], ["v_proj", 8]] as const).map(([proj, out], j) => {
      const module = `model.layers.${layer}.self_attn.${proj}`;
      const a = Float32Array.from({ length: 32 }, (_, i) => Math.sin(i + j + layer));
      const b = Float32Array.from({ length: out * 2 }, (_, i) => Math.cos(i * (j + 1)) / 10);
      return [module, {
        module,
        a: namedTensor(`${module}.lora_A`, [2, 16], a),
        b: namedTensor(`${module}.lora_B`, [out, 2], b),
      }];
    })
  ),
);
await saveLoraAdapter(join(root, "adapter"), {
  kind: "lora-adapter",
  config: {
    r: 2,
    alpha: 4,
    dropout: 0,
    targetModules: ["q_proj", "v_proj"],
    useRslora: false,
    baseModel: join(root, "Qwen2ForCausalLM"),
  },
  modules,
});
expected.texts = TEXTS;
expected.chatMessages = CHAT;
await Deno.writeTextFile(join(root, "expected.json"), JSON.stringify(expected));
await runPython("check-ours");

const fromHf = join(root, "from_hf");
const model = await loadHfModel(fromHf, { tokenizer: false });
const hf = JSON.parse(await Deno.readTextFile(join(fromHf, "hf_logits.json")));
let diff = 0;
referenceForward(model.config, model.tensors, hf.tokens).forEach((row, t) =>
  row.forEach((v, i) => (diff = Math.max(diff, Math.abs(v - hf.logits[t][i]))))
);
console.log(
  `transformers-saved ${model.config.architecture} (${model.tensors.size} tensors, sharded ` +
    `${model.config.torchDtype}) loaded here: reference logits vs transformers max abs diff ` +
    diff.toExponential(2),
);
if (!(diff < 1e-4)) throw new Error("logits disagree");
await saveHfModel(join(root, "resaved_f16"), model.config, model.tensors, {
  dtype: "F16",
  maxShardBytes: 4000,
});
await runPython("check-resaved");
await Deno.remove(root, { recursive: true });
console.log("interop: all checks passed");
