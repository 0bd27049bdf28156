"""PyTorch peer of tests/device/shapes.ts: the same decoder shapes (tests/device/shapes.json), LoRA
r 16 (alpha 32) on q, k, v, o, gate, up and down, random weights, eager attention; the train step
(forward, backward, AdamW on the LoRA matrices) at each BATCHxSEQ and greedy KV-cache generation
of R sequences x N new tokens after P-token prompts. One JSON line per figure, appended to --out
as soon as it is measured.

Two implementations of the same model:
- hf: transformers' Qwen2ForCausalLM (attn_implementation="eager") with PEFT's LoRA, what users
  run; taken when transformers and peft import (the GPU machine has both);
- plain: the same architecture in plain PyTorch (LoRA as B(A(x)) * alpha / r beside a frozen
  nn.Linear), for Debian's python3-torch, which has neither.

Run with the python3 that holds torch (Debian's /usr/bin/python3 here):
  python3 tests/device/torch_peer.py --shape qwen2.5-0.5b --device cuda --dtype bfloat16 \
      --train 8x512,32x512 --generate 64x256 --out figures.jsonl
"""
import argparse
import json
import math
import os
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
RANK, ALPHA = 16, 32
SHAPES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shapes.json")


def pairs(text):
    out = []
    for item in filter(None, text.split(",")):
        b, s = item.split("x")
        out.append((int(b), int(s)))
    return out


# ---- plain PyTorch Qwen2 with LoRA (the architecture of transformers' modeling_qwen2) ----


class LoraLinear(nn.Module):
    """Frozen W (and bias) plus B(A(x)) * alpha / r; PEFT's init: A ~ N(0, 1/r^2), B = 0."""

    def __init__(self, n_in, n_out, bias):
        super().__init__()
        self.base = nn.Linear(n_in, n_out, bias=bias)
        self.base.requires_grad_(False)
        self.lora_A = nn.Parameter(torch.randn(RANK, n_in) / RANK)
        self.lora_B = nn.Parameter(torch.zeros(n_out, RANK))

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.lora_A.to(x.dtype)), self.lora_B.to(x.dtype)) * (ALPHA / RANK)


class RmsNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d), requires_grad=False)
        self.eps = eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], -1) * sin


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        d, self.h, self.kv = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"]
        self.hd = d // self.h
        self.q_proj = LoraLinear(d, self.h * self.hd, True)
        self.k_proj = LoraLinear(d, self.kv * self.hd, True)
        self.v_proj = LoraLinear(d, self.kv * self.hd, True)
        self.o_proj = LoraLinear(self.h * self.hd, d, False)
        ff = c["intermediate_size"]
        self.gate_proj, self.up_proj = LoraLinear(d, ff, False), LoraLinear(d, ff, False)
        self.down_proj = LoraLinear(ff, d, False)
        self.input_layernorm = RmsNorm(d, c["rms_norm_eps"])
        self.post_attention_layernorm = RmsNorm(d, c["rms_norm_eps"])

    def forward(self, x, cos, sin, bias, cache):
        b, t, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, self.h, self.hd).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.kv, self.hd).transpose(1, 2)
        q, k = rotate(q, cos, sin), rotate(k, cos, sin)
        if cache is not None:
            if cache[0] is not None:
                k, v = torch.cat([cache[0], k], 2), torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        g = self.h // self.kv
        k, v = k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)
        w = torch.softmax((q @ k.transpose(-1, -2)) / math.sqrt(self.hd) + bias, -1, dtype=torch.float32)
        a = (w.to(q.dtype) @ v).transpose(1, 2).reshape(b, t, self.h * self.hd)
        x = x + self.o_proj(a)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class PlainQwen2(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.embed_tokens.requires_grad_(False)
        self.layers = nn.ModuleList(Layer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RmsNorm(c["hidden_size"], c["rms_norm_eps"])
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=c["initializer_range"])
                if getattr(m, "bias", None) is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, ids, mask, caches=None, past=0):
        """Logits [b, t, vocab]; positions count real tokens (left padding), as HF's generate."""
        c, (b, t) = self.c, ids.shape
        full = mask  # [b, past + t]
        pos = (full.long().cumsum(-1) - 1).clamp(min=0)[:, past:]
        hd = c["hidden_size"] // c["num_attention_heads"]
        inv = 1.0 / (c["rope_theta"] ** (torch.arange(0, hd, 2, device=ids.device).float() / hd))
        f = pos[..., None].float() * inv
        emb = torch.cat([f, f], -1)[:, None]
        x = self.embed_tokens(ids)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        keys = past + t
        causal = torch.ones(t, keys, dtype=torch.bool, device=ids.device).tril(past)
        allowed = causal[None] & full[:, None, :].bool()
        bias = torch.zeros(allowed.shape, dtype=x.dtype, device=ids.device)
        bias = bias.masked_fill(~allowed, torch.finfo(x.dtype).min)[:, None]
        for i, layer in enumerate(self.layers):
            x = layer(x, cos, sin, bias, None if caches is None else caches[i])
        return self.norm(x) @ self.embed_tokens.weight.T


def plain_generate(model, ids, mask, new_tokens):
    caches = [[None, None] for _ in model.layers]
    logits = model(ids, mask, caches)
    out = []
    for step in range(new_tokens):
        nxt = logits[:, -1].argmax(-1, keepdim=True)
        out.append(nxt)
        if step + 1 == new_tokens:
            break
        past = mask.shape[1]
        mask = torch.cat([mask, torch.ones_like(nxt)], 1)
        logits = model(nxt, mask, caches, past)
    return torch.cat(out, 1)


# ---- transformers + PEFT ----


def hf_model(c, dtype, device):
    from peft import LoraConfig, get_peft_model
    from transformers import Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(**{k: v for k, v in c.items() if k not in ("architectures", "torch_dtype")})
    cfg._attn_implementation = "eager"
    with torch.device(device):  # initialized on the GPU: seconds, not a minute of CPU init
        model = Qwen2ForCausalLM(cfg).to(dtype)
    model.generation_config.eos_token_id = None
    model.generation_config.pad_token_id = 0
    lora = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=0.0, target_modules=TARGETS)
    # PEFT keeps the adapter float32 on a bfloat16 base (autocast_adapter_dtype, its default).
    return get_peft_model(model, lora)


def blas_in_use():
    """The BLAS library this process mapped (Debian's torch calls the system's libblas.so.3)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
        return sorted(paths)
    except OSError:
        return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--dtype", default="float32", choices=["float32", "bfloat16"])
    ap.add_argument("--train", default="", help="BxS[,BxS]")
    ap.add_argument("--generate", default="", help="RxN: R sequences x N new tokens")
    ap.add_argument("--prompt", type=int, default=32)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--impl", default="auto", choices=["auto", "hf", "plain"])
    ap.add_argument("--machine", default="local")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    shapes = json.load(open(SHAPES))
    if a.shape not in shapes:
        ap.error(f"--shape {a.shape}: expected one of {', '.join(shapes)}")
    c = shapes[a.shape]
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    impl = a.impl
    if impl == "auto":
        try:
            import peft  # noqa: F401
            import transformers  # noqa: F401

            impl = "hf"
        except ImportError:
            impl = "plain"
    dtype = getattr(torch, a.dtype)
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    torch.manual_seed(1)
    t0 = time.time()
    if impl == "hf":
        model = hf_model(c, dtype, dev)
    else:
        model = PlainQwen2(c).to(dtype).to(dev)
        for n, p in model.named_parameters():  # LoRA stays float32, as PEFT's autocast keeps it
            if "lora_" in n:
                p.data = p.data.float()
    trainable = [p for p in model.parameters() if p.requires_grad]
    common = {
        "kind": "figure",
        "impl": f"torch-{impl}",
        "torch": torch.__version__,
        "blas": blas_in_use(),
        "machine": a.machine,
        "backend": a.device,
        "dtype": a.dtype,
        "shape": a.shape,
        "threads": torch.get_num_threads(),
        "device": torch.cuda.get_device_name(dev) if cuda else "cpu",
    }

    def sync():
        if cuda:
            torch.cuda.synchronize(dev)

    def emit(fig):
        fig = {**common, **fig}
        if cuda:
            fig["gpuPeakMiB"] = round(torch.cuda.max_memory_allocated(dev) / 2**20)
        fig["rssPeakMiB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        line = json.dumps(fig)
        with open(a.out, "a") as f:
            f.write(line + "\n")
        print(line, flush=True)

    emit({
        "workload": "weights",
        "seconds": time.time() - t0,
        "loraParams": sum(p.numel() for p in trainable),
        "startedAt": int(t0 * 1000),
        "endedAt": int(time.time() * 1000),
    })
    vocab = c["vocab_size"]
    opt = torch.optim.AdamW(trainable, lr=1e-5, weight_decay=0.01)

    def step(ids, mask):
        if impl == "hf":
            loss = model(input_ids=ids, attention_mask=mask, labels=ids).loss
        else:
            logits = model(ids, mask).float()
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)

    gen = torch.Generator().manual_seed(3)
    for b, s in pairs(a.train):
        started = time.time()
        if cuda:
            torch.cuda.reset_peak_memory_stats(dev)
        ids = torch.randint(0, vocab, (b, s), generator=gen).to(dev)
        mask = torch.ones(b, s, dtype=torch.long, device=dev)
        model.train()
        w = time.time()
        step(ids, mask)
        sync()
        warm = time.time() - w
        t = time.time()
        for _ in range(a.steps):
            step(ids, mask)
        sync()
        sec = (time.time() - t) / a.steps
        emit({
            "workload": "train-step", "batch": b, "seq": s, "microBatch": b, "steps": a.steps,
            "secondsPerStep": sec, "firstStepSeconds": warm, "tokensPerSecond": b * s / sec,
            "startedAt": int(started * 1000), "endedAt": int(time.time() * 1000),
        })

    for rows, new in pairs(a.generate):
        started = time.time()
        if cuda:
            torch.cuda.reset_peak_memory_stats(dev)
        ids = torch.tensor(
            [[(r * 31 + i * 7 + 3) % 5000 for i in range(a.prompt)] for r in range(rows)], device=dev
        )
        mask = torch.ones_like(ids)
        model.eval()

        def run(n):
            with torch.no_grad():
                if impl == "hf":
                    out = model.generate(
                        input_ids=ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n,
                        do_sample=False, use_cache=True,
                    )
                    return out[:, ids.shape[1]:]
                return plain_generate(model, ids, mask, n)

        run(2)
        sync()
        t = time.time()
        out = run(new)
        sync()
        sec = time.time() - t
        emit({
            "workload": "generate", "batch": rows, "prompt": a.prompt, "newTokens": new,
            "generated": int(out.numel()), "seconds": sec, "tokensPerSecond": out.numel() / sec,
            "startedAt": int(started * 1000), "endedAt": int(time.time() * 1000),
        })


if __name__ == "__main__":
    sys.exit(main())
