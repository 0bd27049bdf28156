"""PyTorch peer for `deno task bench models`: the embedded model's shape (Qwen2: 6 layers, d=128,
4 query / 2 kv heads, SwiGLU 384, vocab 259, tied embeddings), random weights, float32, CPU.
Same workloads: next token with KV cache at context 128/512 (batch 1), generation batch 64 x 32
new tokens after 16-token prompts, full-parameter train step batch 8 x 128 (forward + backward
+ AdamW). Run: python3 torch_decoder_bench.py [threads]

Debian's torch calls whatever libblas.so.3 is, and Debian's default (libblas3) is the reference
BLAS, several times slower than OpenBLAS at the train step's products: a peer on it is a straw man.
So the script requires OpenBLAS (`apt-get install -y libopenblas0-pthread`) and prints the BLAS
library it loaded, with the BLAS torch was built against (torch.__config__.show())."""
import sys, time, math, torch
import torch.nn as nn, torch.nn.functional as F

torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 2)


def loaded_blas():
    """Paths of the BLAS libraries this process mapped (after a product has run)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.split()[-1].lower()}
    return sorted(paths)


blas = loaded_blas()
built = [item.strip() for item in torch.__config__.show().replace("\n", ",").split(",") if "BLAS_INFO" in item]
print(f"torch {torch.__version__}; BLAS loaded: {', '.join(blas) or 'none found'}; built with {', '.join(built)}")
if not any("openblas" in path for path in blas):
    sys.exit(
        "the peer needs OpenBLAS under torch (the reference BLAS makes PyTorch a straw man): "
        "apt-get install -y libopenblas0-pthread"
    )
torch.manual_seed(1)
V, D, L, H, KV, HD, FF = 259, 128, 6, 4, 2, 32, 384

class RMS(nn.Module):
    def __init__(s, d): super().__init__(); s.w = nn.Parameter(torch.ones(d))
    def forward(s, x): return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * s.w

def rope(x, pos):  # x [B, h, T, hd]
    inv = 1.0 / (10000 ** (torch.arange(0, HD, 2).float() / HD))
    f = pos[:, None].float() * inv[None]
    cos, sin = torch.cat([f.cos()] * 2, -1), torch.cat([f.sin()] * 2, -1)
    x1, x2 = x[..., :HD // 2], x[..., HD // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin

class Block(nn.Module):
    def __init__(s):
        super().__init__()
        s.n1, s.n2 = RMS(D), RMS(D)
        s.q = nn.Linear(D, H * HD); s.k = nn.Linear(D, KV * HD); s.v = nn.Linear(D, KV * HD)
        s.o = nn.Linear(H * HD, D, bias=False)
        s.g = nn.Linear(D, FF, bias=False); s.u = nn.Linear(D, FF, bias=False); s.d = nn.Linear(FF, D, bias=False)
    def forward(s, x, pos, cache=None):
        B, T, _ = x.shape
        h = s.n1(x)
        q = s.q(h).view(B, T, H, HD).transpose(1, 2)
        k = s.k(h).view(B, T, KV, HD).transpose(1, 2)
        v = s.v(h).view(B, T, KV, HD).transpose(1, 2)
        q, k = rope(q, pos), rope(k, pos)
        if cache is not None:
            if cache[0] is not None: k = torch.cat([cache[0], k], 2); v = torch.cat([cache[1], v], 2)
            cache[0], cache[1] = k, v
        k2 = k.repeat_interleave(H // KV, 1); v2 = v.repeat_interleave(H // KV, 1)
        w = (q @ k2.transpose(-1, -2)) / math.sqrt(HD)
        if T > 1:
            S = k2.shape[2]
            w = w.masked_fill(torch.ones(T, S, dtype=torch.bool).triu(S - T + 1), float("-inf"))
        a = torch.softmax(w, -1) @ v2
        x = x + s.o(a.transpose(1, 2).reshape(B, T, H * HD))
        h = s.n2(x)
        return x + s.d(F.silu(s.g(h)) * s.u(h))

class Model(nn.Module):
    def __init__(s):
        super().__init__(); s.emb = nn.Embedding(V, D); s.blocks = nn.ModuleList(Block() for _ in range(L)); s.norm = RMS(D)
    def forward(s, ids, pos, caches=None):
        x = s.emb(ids)
        for i, b in enumerate(s.blocks): x = b(x, pos, None if caches is None else caches[i])
        return s.norm(x) @ s.emb.weight.T

m = Model()
def timed(reps, fn):
    fn(); t = time.perf_counter()
    for _ in range(reps): fn()
    return (time.perf_counter() - t) / reps

with torch.inference_mode():
    for ctx in (128, 512):
        caches = [[None, None] for _ in range(L)]
        m(torch.arange(ctx)[None] % 250, torch.arange(ctx), caches)
        def one():
            c2 = [[k, v] for k, v in caches]
            m(torch.tensor([[5]]), torch.tensor([ctx]), c2)
        def recompute(): m(torch.arange(ctx + 1)[None] % 250, torch.arange(ctx + 1))
        a, b = timed(10, one), timed(3, recompute)
        print(f"torch next token at context {ctx}: KV cache {1/a:.1f} tok/s, recompute {1/b:.1f} tok/s")
    def gen():
        caches = [[None, None] for _ in range(L)]
        ids = (torch.arange(16)[None] * 7 + torch.arange(64)[:, None]) % 250
        logits = m(ids, torch.arange(16), caches)
        for t in range(32):
            nxt = logits[:, -1].argmax(-1, keepdim=True)
            logits = m(nxt, torch.tensor([16 + t]), caches)
    s = timed(1, gen)
    print(f"torch generation, batch 64 x 32 new tokens (16-token prompts): {64*32/s:.0f} tok/s")

opt = torch.optim.AdamW(m.parameters(), lr=1e-4, weight_decay=0)
ids = (torch.arange(129)[None] * 7 + torch.arange(8)[:, None]) % 250
def step():
    opt.zero_grad()
    logits = m(ids[:, :-1], torch.arange(128))
    lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    (-lp.mean()).backward()
    torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
    opt.step()
s = timed(2, step)
# CPU time per step (after the warm-up) is what a loaded machine's scheduler moves least.
cpu = time.process_time()
for _ in range(4): step()
cpu = (time.process_time() - cpu) / 4
print(f"torch train step (full, AdamW), batch 8 x 128: {8*128/s:.0f} tok/s ({s:.2f} s/step, {cpu:.3f} s CPU/step)")
