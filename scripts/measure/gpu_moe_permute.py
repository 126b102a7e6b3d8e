#!/usr/bin/env python3
"""An MoE layer's router and token permutation kernels in eager PyTorch, on one GPU.

Why (issue 39): lostflops prices the router's scores and top-k and the permutation and
un-permutation of token copies (src/workload/layer_work.cpp, "router and permutation
bytes") as memory-bound bytes at the GPU's vectorised copy rate. No component
measurement checks those rates: ../shared/reference/h200/components/ times the expert
GEMMs (moe_gemm.csv) but not what surrounds them. The MoE rows of
../shared/reference/modern/ run from 8 to 256 experts at top-k 2 to 9.

This script times, per model shape and tokens on the rank, with the ops an eager
implementation runs (transformers' MoE blocks; Megatron-Core's unfused permute path,
moe_utils.py permute / unpermute, does the same gathers and scatters):

  router    the gate GEMM (tokens x hidden -> experts, bf16), the scores in fp32 (softmax,
            or sigmoid for DeepSeek-V3's shape) and torch.topk
  permute   the token copies in expert order: argsort of the flattened expert ids and
            index_select of the hidden rows (tokens x top-k rows of hidden, bf16)
  unpermute the experts' outputs weighted by their probabilities and summed back into
            token order: the multiply and index_add_ (bf16, and fp32 accumulation)

each as `triton.testing.do_bench`'s median (L2 flushed between calls), with the bytes
each moves at least and the rate that gives (GB/s, against the device copy's 3,775 GB/s
on the H200 in ../shared/reference/h200/components/other.csv).

Usage: python3 scripts/measure/gpu_moe_permute.py OUT_DIR [--budget-s 420] [--sections a,b]
Writes OUT_DIR/{results.json, clocks.csv, moe_permute.csv}; the log is stdout. Sections,
the budget and the clock sampler are gpu_step_clocks.py's.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_step_clocks as g  # noqa: E402  (OUT, budget, sections, sampler)

torch = g.torch
log = g.log

# (name, hidden, experts, top-k, score function): the MoE rows' models (config.json values)
SHAPES = [
    ("mixtral-8x7b", 4096, 8, 2, "softmax"),
    ("qwen3-30b-a3b", 2048, 128, 8, "softmax"),
    ("gpt-oss-120b", 2880, 128, 4, "softmax"),
    ("deepseek-v3", 7168, 256, 8, "sigmoid"),
]
TOKENS = (4096, 16384)


def bench_ms(fn):
    from triton.testing import do_bench
    return do_bench(fn, warmup=10, rep=50, return_mode="median")


def one(name, hidden, experts, k, score, tokens):
    x = torch.randn(tokens, hidden, device=g.DEV, dtype=torch.bfloat16)
    w = torch.randn(experts, hidden, device=g.DEV, dtype=torch.bfloat16)
    logits = x @ w.t()
    scores = (torch.sigmoid if score == "sigmoid" else lambda t: torch.softmax(t, dim=-1))(logits.float())
    probs, ids = torch.topk(scores, k, dim=-1)
    order = ids.flatten().argsort(stable=True)
    rows = order // k
    y = torch.randn(tokens * k, hidden, device=g.DEV, dtype=torch.bfloat16)
    p = probs.flatten()[order].to(torch.bfloat16)
    out16 = torch.zeros(tokens, hidden, device=g.DEV, dtype=torch.bfloat16)
    out32 = torch.zeros(tokens, hidden, device=g.DEV, dtype=torch.float32)
    tk = tokens * k
    cases = [
        ("router gate GEMM", lambda: x @ w.t(), 2 * (tokens * hidden + experts * hidden + tokens * experts)),
        ("router scores fp32 + topk",
         lambda: torch.topk((torch.sigmoid if score == "sigmoid" else lambda t: torch.softmax(t, dim=-1))(
             logits.float()), k, dim=-1), tokens * experts * (2 + 4 + 4 + 4 + 4) + tokens * k * (4 + 8)),
        ("permute argsort", lambda: ids.flatten().argsort(stable=True), tk * 8 * 2),
        ("permute index_select", lambda: x.index_select(0, rows), tk * (hidden * 2 * 2 + 8)),
        ("unpermute multiply by probs", lambda: y * p[:, None], tk * hidden * 2 * 2 + tk * 2),
        ("unpermute index_add_ bf16", lambda: out16.index_add_(0, rows, y), tk * (hidden * 2 * 3 + 8)),
        ("unpermute index_add_ fp32", lambda: out32.index_add_(0, rows, y.float()),
         tk * (hidden * (2 + 4 + 4 + 4 * 2) + 8)),
    ]
    res = []
    for what, fn, nbytes in cases:
        try:
            ms = bench_ms(fn)
        except Exception as e:  # noqa: BLE001
            log("moe_permute", name, tokens, what, "failed:", e)
            continue
        res.append({"model": name, "hidden": hidden, "experts": experts, "top_k": k, "tokens": tokens,
                    "what": what, "ms": ms, "bytes_min": nbytes, "GBps": nbytes / (ms * 1e-3) / 1e9})
        log("moe_permute", name, "tokens", tokens, what, round(ms, 4), "ms", round(res[-1]["GBps"], 1), "GB/s")
    return res


def moe_permute():
    rows = []
    for name, hidden, experts, k, score in SHAPES:
        for tokens in TOKENS:
            rows += one(name, hidden, experts, k, score, tokens)
            torch.cuda.empty_cache()
    if rows:
        with open(os.path.join(g.OUT, "moe_permute.csv"), "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            wr.writeheader()
            wr.writerows(rows)
    return {"rows": len(rows)}


if __name__ == "__main__":
    sampler = g.start_sampler()
    g.section("meta", 1, g.meta)
    g.section("moe_permute", 30, moe_permute)
    if sampler:
        sampler.terminate()
    log("done in", round(g.time.time() - g.T0, 1), "s")
    g.save()
