"""Python half of tests/hf/interop/run.ts (see there). Usage: check_hf_stack.py PHASE ROOT."""
import json
import os
import sys

import numpy as np
import torch
from peft import PeftModel
from safetensors.numpy import load_file
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

phase, root = sys.argv[1], sys.argv[2]
TOLERANCE = 1e-4  # float32 compute in transformers vs float64 reference


def logits_of(model_dir, tokens):
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    with torch.no_grad():
        return model(torch.tensor([tokens])).logits[0].double().numpy()


def check_ours():
    exp = json.load(open(f"{root}/expected.json"))
    texts, chat = exp["texts"], exp["chatMessages"]
    for arch in ["Qwen2ForCausalLM", "Qwen3ForCausalLM", "LlamaForCausalLM"]:
        d, e = f"{root}/{arch}", exp[arch]
        assert [Tokenizer.from_file(f"{d}/tokenizer.json").encode(t).ids for t in texts] == e["encodings"], arch
        prompt = AutoTokenizer.from_pretrained(d).apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
        assert prompt == e["chat"], (prompt, e["chat"])
        diff = np.abs(logits_of(d, e["tokens"]) - np.array(e["logits"])).max()
        print(f"{arch}: transformers logits vs our reference forward: max abs diff {diff:.2e}")
        assert diff < TOLERANCE
    e = exp["embedded"]
    assert [Tokenizer.from_file(f"{e['dir']}/tokenizer.json").encode(t).ids for t in texts] == e["encodings"]
    prompt = AutoTokenizer.from_pretrained(e["dir"]).apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
    assert prompt == e["chat"]
    print("tokenizers + AutoTokenizer: same ids and chat prompts (fixture and embedded tokenizers)")
    base = AutoModelForCausalLM.from_pretrained(f"{root}/Qwen2ForCausalLM", dtype=torch.float32)
    peft_model = PeftModel.from_pretrained(base, f"{root}/adapter")
    stored = load_file(f"{root}/adapter/adapter_model.safetensors")
    for layer in [0, 1]:
        for proj in ["q_proj", "v_proj"]:
            mod = getattr(peft_model.base_model.model.model.layers[layer].self_attn, proj)
            key = f"base_model.model.model.layers.{layer}.self_attn.{proj}"
            assert np.array_equal(mod.lora_A["default"].weight.detach().numpy(), stored[f"{key}.lora_A.weight"])
            assert np.array_equal(mod.lora_B["default"].weight.detach().numpy(), stored[f"{key}.lora_B.weight"])
            assert mod.scaling["default"] == 2.0
    print("peft: adapter loads with every lora_A/lora_B equal to our file, scaling alpha/r = 2")
    config = Qwen3Config(vocab_size=64, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                         max_position_embeddings=64, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = Qwen3ForCausalLM(config).to(torch.bfloat16)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p) * 0.3 + (1.0 if p.ndim == 1 else 0.0))
    model.save_pretrained(f"{root}/from_hf", max_shard_size="8KB")
    tokens = [1, 5, 9, 3]
    logits = logits_of(f"{root}/from_hf", tokens)
    json.dump({"tokens": tokens, "logits": logits.tolist()}, open(f"{root}/from_hf/hf_logits.json", "w"))
    print("transformers saved", sorted(f for f in os.listdir(f"{root}/from_hf") if f.endswith(".safetensors")))


def check_resaved():
    hf = json.load(open(f"{root}/from_hf/hf_logits.json"))
    diff = np.abs(logits_of(f"{root}/resaved_f16", hf["tokens"]) - np.array(hf["logits"])).max()
    print(f"our sharded F16 re-save loads in transformers: logits max abs diff vs original {diff:.2e}")
    assert diff < TOLERANCE


{"check-ours": check_ours, "check-resaved": check_resaved}[phase]()
