#!/usr/bin/env python3
"""Component micro-benchmarks of one GPU, for lostflops' device profile.

Measures, on the GPU it runs on, the kernels the cost model prices one by one:
GEMMs by shape and dtype (bf16, fp8 per-tensor and row-wise scaled, through
cuBLASLt as PyTorch and Transformer Engine call it), grouped GEMMs of small
per-expert shapes (torch._grouped_mm, as Megatron-Core and torchtitan MoE use),
attention by sequence length, head dim, GQA and causal mask (PyTorch SDPA with
its FlashAttention-2 and cuDNN backends), memory-bound kernels (copy, add,
RMSNorm fused and eager-fp32, SwiGLU, rotary, cross-entropy), and the host and
device cost of a kernel launch. Writes one CSV per kind plus meta.json into the
output folder, data/measured/<gpu>/ with <gpu> the lostflops catalog name;
`lostflops calibrate components --measured data/measured/<gpu>` reads it
(scripts/measure/README.md). data/measured/<gpu>/README.md says how the
committed copies were made.

Timing: triton.testing.do_bench (CUDA events around each call, the L2 cache
flushed between calls, median of the repetitions), after a warm-up; inputs are
random (never zeros). Each GEMM kind is checked once against a float32
reference (relative error printed in meta.json).

Usage: python3 scripts/measure/gpu_components.py data/measured/<gpu>/ [--quick]
"""
import csv
import json
import math
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F
from triton.testing import do_bench

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
QUICK = "--quick" in sys.argv
DEV = torch.device("cuda")
torch.manual_seed(1234)
T0 = time.time()


def log(*a):
    print(f"[{time.time() - T0:6.1f}s]", *a, flush=True)


def bench_ms(fn, rep=60):
    return do_bench(fn, warmup=10, rep=rep, return_mode="median")


def write_csv(name, header, rows):
    path = os.path.join(OUT, name)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    log(f"wrote {name}: {len(rows)} rows")


def meta():
    p = torch.cuda.get_device_properties(0)
    m = {
        "gpu": p.name,
        "sm_count": p.multi_processor_count,
        "memory_bytes": p.total_memory,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "date": time.strftime("%Y-%m-%d"),
    }
    try:
        import triton
        m["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        pass
    q = "driver_version,power.limit,power.max_limit,clocks.max.sm,clocks.max.mem,clocks.sm,temperature.gpu"
    try:
        s = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20).stdout.strip()
        m["nvidia_smi"] = dict(zip(q.split(","), [x.strip() for x in s.split(",")]))
    except Exception as e:  # noqa: BLE001
        m["nvidia_smi_error"] = str(e)
    return m


# ---------------------------------------------------------------- ceilings
def ceilings(m):
    n = 1 << 30  # 1 GiB of bytes
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    ms = bench_ms(lambda: b.copy_(a))
    m["copy_GBps_read_plus_write"] = 2 * n / (ms * 1e-3) / 1e9
    x = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    y = torch.randn(8192, 8192, device=DEV, dtype=torch.bfloat16)
    ms = bench_ms(lambda: x @ y)
    m["gemm_bf16_8192_tflops"] = 2 * 8192**3 / (ms * 1e-3) / 1e12
    del a, b
    log("ceilings", m["copy_GBps_read_plus_write"], m["gemm_bf16_8192_tflops"])


# ---------------------------------------------------------------- GEMMs
FP8 = torch.float8_e4m3fn


def make_gemm(dtype, m, n, k, scaling):
    """fn computing (m x k) @ (k x n) as a Linear layer does (weight n x k, row-major)."""
    if dtype == "bf16":
        a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=DEV, dtype=torch.bfloat16)
        return lambda: torch.mm(a, w.t()), (a, w)
    a = torch.randn(m, k, device=DEV).to(FP8)
    w = torch.randn(n, k, device=DEV).to(FP8)
    if scaling == "tensor":
        sa = torch.tensor(1.0, device=DEV)
        sb = torch.tensor(1.0, device=DEV)
    else:  # row-wise: one scale per row of A and per column of B
        sa = torch.ones(m, 1, device=DEV)
        sb = torch.ones(1, n, device=DEV)
    return (lambda: torch._scaled_mm(a, w.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16)), (a, w)


def check_gemm(m_, dtype, scaling):
    fn, (a, w) = make_gemm(dtype, 256, 512, 1024, scaling)
    out = fn().float()
    ref = a.float() @ w.float().t()
    err = (out - ref).norm() / ref.norm()
    m_[f"check_{dtype}_{scaling}_rel_err"] = float(err)


GEMM_NK = [  # (n, k, what): a Linear's output width and input width
    (6144, 4096, "llama3-8b qkv tp1"), (4096, 4096, "llama3-8b out tp1"),
    (28672, 4096, "llama3-8b fc1 tp1"), (4096, 14336, "llama3-8b fc2 tp1"),
    (1280, 8192, "llama3-70b qkv tp8"), (8192, 1024, "llama3-70b out tp8"),
    (7168, 8192, "llama3-70b fc1 tp8"), (8192, 3584, "llama3-70b fc2 tp8"),
    (2560, 16384, "llama3-405b qkv tp8"), (13312, 16384, "llama3-405b fc1 tp8"),
    (16384, 6656, "llama3-405b fc2 tp8"), (16032, 4096, "vocab 128k/8 logits"),
    (1024, 1024, "square"), (2048, 2048, "square"), (4096, 4096, "square"),
    (8192, 8192, "square"), (16384, 16384, "square"),
]
GEMM_M = [128, 256, 512, 1024, 2048, 4096, 8192, 16384]


def gemms():
    rows = []
    kinds = [("bf16", "none"), ("fp8", "tensor"), ("fp8", "row")]
    for dtype, scaling in kinds:
        for n, k, what in GEMM_NK:
            for m in (GEMM_M if not QUICK else [1024, 8192]):
                if m * n * k > 16384 * 16384 * 16384:
                    continue
                try:
                    fn, _ = make_gemm(dtype, m, n, k, scaling)
                    ms = bench_ms(fn, rep=40)
                except Exception as e:  # noqa: BLE001
                    log("gemm failed", dtype, scaling, m, n, k, e)
                    continue
                rows.append([dtype, scaling, m, n, k, what, f"{ms * 1e3:.3f}",
                             f"{2 * m * n * k / (ms * 1e-3) / 1e12:.1f}"])
        log("gemm", dtype, scaling, "done")
    write_csv("gemm.csv", ["dtype", "scaling", "m", "n", "k", "what", "time_us", "tflops"], rows)


# ---------------------------------------------------------------- grouped GEMMs
GROUPED = [  # (hidden, expert ffn, what): gate+up (n = 2 f, k = h) and down (n = h, k = f)
    (7168, 2048, "deepseek-v3"), (2048, 768, "qwen3-30b-a3b"),
    (4096, 14336, "mixtral-8x7b"), (2880, 2880, "gpt-oss-120b"),
]


def grouped():
    rows = []
    if not hasattr(torch, "_grouped_mm"):
        log("no torch._grouped_mm")
        return
    for h, f, what in GROUPED:
        for experts in (8, 32):
            for tpe in (64, 128, 256, 512, 1024, 2048, 4096):
                for which, n, k in (("gate_up", 2 * f, h), ("down", h, f)):
                    total = experts * tpe
                    a = torch.randn(total, k, device=DEV, dtype=torch.bfloat16)
                    w = torch.randn(experts, n, k, device=DEV, dtype=torch.bfloat16)
                    offs = torch.arange(tpe, total + 1, tpe, device=DEV, dtype=torch.int32)
                    wt = w.transpose(-2, -1)
                    try:
                        fn = lambda: torch._grouped_mm(a, wt, offs=offs)  # noqa: E731
                        ms = bench_ms(fn, rep=30)
                    except Exception as e:  # noqa: BLE001
                        log("grouped failed", what, experts, tpe, which, e)
                        continue
                    # One plain GEMM of the same total work, for the ratio.
                    fl = 2 * total * n * k
                    rows.append([what, which, experts, tpe, n, k, f"{ms * 1e3:.3f}",
                                 f"{fl / (ms * 1e-3) / 1e12:.1f}"])
        log("grouped", what, "done")
    write_csv("grouped_gemm.csv", ["what", "gemm", "experts", "tokens_per_expert", "n", "k",
                                   "time_us", "tflops"], rows)


# ---------------------------------------------------------------- attention
from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

ATTN_CFG = [  # (heads, kv_heads, head_dim, what)
    (32, 8, 128, "llama3-8b gqa"), (32, 32, 128, "mha d128"), (16, 16, 64, "mha d64"),
    (16, 8, 256, "gemma2-9b d256"),
]
SEQS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]


def attention():
    rows = []
    backends = [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]
    for heads, kvh, d, what in ATTN_CFG:
        for s in (SEQS if not QUICK else [4096, 32768]):
            b = max(1, 32768 // s)  # about 32k tokens per call, as a micro-batch of 8 x 4k
            if s >= 65536 and heads * d > 4096:
                continue
            for causal in (True, False):
                q = torch.randn(b, heads, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                k = torch.randn(b, kvh, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                v = torch.randn(b, kvh, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                # Executed FLOPs: 4 b h s^2 d forward, halved by the causal mask; backward 2.5x.
                fl_fwd = 4 * b * heads * s * s * d * (0.5 if causal else 1.0)
                for name, be in backends:
                    try:
                        with sdpa_kernel([be]):
                            def fwd():
                                return F.scaled_dot_product_attention(q, k, v, is_causal=causal,
                                                                      enable_gqa=kvh != heads)
                            o = fwd()
                            g = torch.randn_like(o)
                            ms_f = bench_ms(fwd, rep=40)

                            def fwd_bwd():
                                out = fwd()
                                torch.autograd.grad(out, (q, k, v), g)
                            ms_fb = bench_ms(fwd_bwd, rep=40)
                    except Exception as e:  # noqa: BLE001
                        rows.append([name, what, heads, kvh, d, s, b, int(causal), "", "", "", "",
                                     str(e).split("\n")[0][:80]])
                        continue
                    ms_b = max(ms_fb - ms_f, 1e-6)
                    rows.append([name, what, heads, kvh, d, s, b, int(causal), f"{ms_f * 1e3:.1f}",
                                 f"{ms_b * 1e3:.1f}", f"{fl_fwd / (ms_f * 1e-3) / 1e12:.1f}",
                                 f"{2.5 * fl_fwd / (ms_b * 1e-3) / 1e12:.1f}", ""])
                del q, k, v
        log("attention", what, "done")
    write_csv("attention.csv", ["backend", "what", "heads", "kv_heads", "head_dim", "seq", "batch", "causal",
                                "fwd_us", "bwd_us", "fwd_tflops", "bwd_tflops", "error"], rows)


# ---------------------------------------------------------------- memory-bound
def memory_bound():
    rows = []
    tokens, h = 16384, 8192
    x = torch.randn(tokens, h, device=DEV, dtype=torch.bfloat16)
    y = torch.randn_like(x)
    w = torch.randn(h, device=DEV, dtype=torch.bfloat16)
    e = x.numel()

    def rms_eager():  # torchtitan / HF LlamaRMSNorm: through fp32
        xf = x.float()
        r = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return r.type_as(x) * w

    f_ = 14336
    gu = torch.randn(tokens // 2, 2 * f_, device=DEV, dtype=torch.bfloat16)

    def swiglu():
        gate, up = gu.chunk(2, dim=-1)
        return F.silu(gate) * up

    vocab = 128256 // 8
    logits = torch.randn(8192, vocab, device=DEV, dtype=torch.bfloat16)
    target = torch.randint(0, vocab, (8192,), device=DEV)

    def xent():
        return F.cross_entropy(logits.float(), target)

    cases = [
        ("copy", lambda: y.copy_(x), 2 * 2 * e),
        ("add", lambda: x + y, 3 * 2 * e),
        ("rms_norm_fused", lambda: F.rms_norm(x, (h,), w), 2 * 2 * e),
        ("rms_norm_eager_fp32", rms_eager, 2 * 2 * e),
        ("layer_norm", lambda: F.layer_norm(x, (h,)), 2 * 2 * e),
        ("swiglu_eager", swiglu, 3 * 2 * gu.numel() // 2),
        ("gelu", lambda: F.gelu(x, approximate="tanh"), 2 * 2 * e),
        ("cross_entropy_fp32", xent, 2 * logits.numel()),
    ]
    for name, fn, useful_bytes in cases:
        ms = bench_ms(fn, rep=40)
        rows.append([name, useful_bytes, f"{ms * 1e3:.1f}", f"{useful_bytes / (ms * 1e-3) / 1e9:.0f}"])
    write_csv("memory_bound.csv", ["kernel", "useful_bytes", "time_us", "useful_GBps"], rows)
    log("memory-bound done")


# ---------------------------------------------------------------- launches
def launches(m):
    t = torch.randn(256, device=DEV)
    torch.cuda.synchronize()
    n = 20000
    # Host-bound: many tiny eager ops back to back; the GPU waits on the host.
    for _ in range(100):
        t.add_(1.0)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        t.add_(1.0)
    torch.cuda.synchronize()
    m["eager_op_host_us"] = (time.perf_counter() - t0) / n * 1e6
    # Device-side per kernel: the same ops replayed from a CUDA graph.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            t.add_(1.0)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    k = 1000
    with torch.cuda.graph(g):
        for _ in range(k):
            t.add_(1.0)
    g.replay()
    torch.cuda.synchronize()
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ev0.record()
    for _ in range(10):
        g.replay()
    ev1.record()
    torch.cuda.synchronize()
    m["graph_kernel_us"] = ev0.elapsed_time(ev1) * 1e3 / (10 * k)
    log("launches", m["eager_op_host_us"], m["graph_kernel_us"])


def main():
    os.makedirs(OUT, exist_ok=True)
    m = meta()
    log(json.dumps(m))
    for dt, sc in (("bf16", "none"), ("fp8", "tensor"), ("fp8", "row")):
        try:
            check_gemm(m, dt, sc)
        except Exception as e:  # noqa: BLE001
            m[f"check_{dt}_{sc}_error"] = str(e)[:200]
    ceilings(m)
    launches(m)
    with open(os.path.join(OUT, "meta.json"), "w") as f:
        json.dump(m, f, indent=1)
    for part in (memory_bound, gemms, grouped, attention):
        try:
            part()
        except Exception as e:  # noqa: BLE001
            log("part failed", part.__name__, e)
        with open(os.path.join(OUT, "meta.json"), "w") as f:
            m["elapsed_s"] = time.time() - T0
            json.dump(m, f, indent=1)
    log("all done")


if __name__ == "__main__":
    main()
