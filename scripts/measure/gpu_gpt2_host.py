#!/usr/bin/env python3
"""What the two rows of ../shared/reference/h200/ that issue 38 still misses need, on one GPU.

Why: `build/lostflops validate ../shared/reference/h200/measured-runs.csv` (2026-12-01)
predicts GPT-2 XL at 1024 x 8 11.3 % too fast, and no trace of ours holds a GPT-2 step;
and it predicts the host-bound Llama-3.2-1B step at 512 x 2 27.6 % too fast while the
host-bound Qwen2.5-0.5B-shape step of the same table is within 0.2 %. The shared traces
ran their hosts at 0.89-1.58 x the calibration trace's CPU time per operator
(`lostflops trace ... --job`), so two steps measured in two processes cannot tell a
host's speed from a recipe's cost. This script measures, on the GPU it runs on:

  lm_head       GPT-2's output layer, bf16, 8,192 tokens x 1,600 -> vocab, as F.linear and
                autograd run it (forward x @ W.T, input gradient g @ W, weight gradient
                g.T @ x), at vocab 50,257 (not a multiple of 8: the logits' rows are not
                16-byte aligned) and 50,304 (padded to 64)
  sdpa_dropout  causal SDPA at GPT-2 XL's shape (batch 8, 25 heads of 64, seq 1024), dropout
                0 and 0.1 (GPT2Config.attn_pdrop, which transformers passes in training),
                q/k/v contiguous and as GPT-2's split of c_attn's output (strided)
  host_pair     the table's two host-bound recipes in one process, alternately, three
                rounds of 20 timed steps each: the 1B shape at 512 x 2 and the Qwen2.5-0.5B
                shape at 2048 x 1, eager, fp32 weights + bf16 autocast, fused AdamW; the
                ratio of their steps on one host (0.96 in the reference table)
  gpt2_step     GPT2LMHeadModel at GPT-2 XL's shape (random weights) at 1024 x 8, the
                reference row's recipe: median step, peak, and a trace of 2 steps

Usage: python3 scripts/measure/gpu_gpt2_host.py OUT_DIR [--budget-s 420] [--sections a,b]
The steps run as gpu_step_clocks.run_steps runs them: use_cache=False, only the loss kept
through the backward, the reference table's recipe (--hf-cache: the config's cache).
Writes OUT_DIR/{results.json, clocks.csv, lm_head.csv, sdpa_dropout.csv, trace-*.json.gz};
the log is stdout. Sections, the budget and the clock sampler are gpu_step_clocks.py's.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_step_clocks as g  # noqa: E402  (OUT, budget, sections, sampler, run_steps)

torch = g.torch
log = g.log


def bench_ms(fn):
    from triton.testing import do_bench
    return do_bench(fn, warmup=10, rep=50, return_mode="median")


def write_csv(name, rows):
    if not rows:
        return
    with open(os.path.join(g.OUT, name), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def lm_head():
    """GPT-2 XL's output layer GEMMs, bf16: tokens 8,192, hidden 1,600, vocab unaligned and padded."""
    tokens, hidden = 8192, 1600
    rows = []
    x = torch.randn(tokens, hidden, device=g.DEV, dtype=torch.bfloat16)
    for vocab in (50257, 50304):
        w = torch.randn(vocab, hidden, device=g.DEV, dtype=torch.bfloat16)
        gr = torch.randn(tokens, vocab, device=g.DEV, dtype=torch.bfloat16)
        for what, fn in (("forward x @ W.T", lambda: torch.nn.functional.linear(x, w)),
                         ("input gradient g @ W", lambda: torch.matmul(gr, w)),
                         ("weight gradient g.T @ x", lambda: torch.matmul(gr.t(), x))):
            ms = bench_ms(fn)
            flops = 2.0 * tokens * hidden * vocab
            rows.append({"vocab": vocab, "tokens": tokens, "hidden": hidden, "gemm": what, "ms": ms,
                         "tflops": flops / (ms * 1e-3) / 1e12})
            log("lm_head vocab", vocab, what, round(ms, 4), "ms", round(rows[-1]["tflops"], 1), "TFLOP/s")
        del w, gr
    write_csv("lm_head.csv", rows)
    return {"rows": rows}


def sdpa_dropout():
    """Causal SDPA at GPT-2 XL's shape with and without dropout, contiguous and split from c_attn."""
    import torch.nn.functional as F
    b, h, s, d = 8, 25, 1024, 64
    rows = []
    gr = torch.randn(b, h, s, d, device=g.DEV, dtype=torch.bfloat16)
    qkv = torch.randn(b, s, 3 * h * d, device=g.DEV, dtype=torch.bfloat16, requires_grad=True)
    dense = [torch.randn(b, h, s, d, device=g.DEV, dtype=torch.bfloat16, requires_grad=True) for _ in range(3)]

    def split():  # GPT2Attention: c_attn(x).split(split_size, dim=2), each .view(b, s, h, d).transpose(1, 2)
        return [t.view(b, s, h, d).transpose(1, 2) for t in qkv.split(h * d, dim=2)]

    for layout in ("contiguous", "gpt2_split"):
        for p in (0.0, 0.1):
            def fwd():
                q, k, v = dense if layout == "contiguous" else split()
                return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)

            def fwd_bwd():
                fwd().backward(gr)
            try:
                f_ms, fb_ms = bench_ms(fwd), bench_ms(fwd_bwd)
            except Exception as e:  # noqa: BLE001
                log("sdpa_dropout", layout, p, "failed:", e)
                continue
            causal = 4.0 * b * h * s * s * d / 2  # forward FLOPs of the causal half
            rows.append({"layout": layout, "dropout_p": p, "batch": b, "heads": h, "seq": s, "head_dim": d,
                         "fwd_ms": f_ms, "fwd_bwd_ms": fb_ms, "fwd_tflops": causal / (f_ms * 1e-3) / 1e12,
                         "bwd_tflops": 2.5 * causal / ((fb_ms - f_ms) * 1e-3) / 1e12})
            log("sdpa_dropout", layout, "p", p, "fwd", round(f_ms, 4), "ms fwd+bwd", round(fb_ms, 4), "ms")
    write_csv("sdpa_dropout.csv", rows)
    return {"rows": rows}


def host_pair():
    """The two host-bound recipes alternately in one process: their step ratio on one host."""
    r = {"rounds": []}
    for i in range(3):
        one = {}
        g.build_model("1b")
        one["1b_s512"] = g.run_steps("1b-s512-b2-autocast", g.MODEL["model"], 512, 2, 3, 20, 0)
        g.build_model("qwen05")
        one["qwen05_s2048"] = g.run_steps("qwen05-s2048-b1-autocast", g.MODEL["model"], 2048, 1, 3, 20, 0)
        one["ratio_1b_over_qwen"] = one["1b_s512"]["step_s_median"] / one["qwen05_s2048"]["step_s_median"]
        log("host_pair round", i, "1B/Qwen step ratio", round(one["ratio_1b_over_qwen"], 3))
        r["rounds"].append(one)
        g.save_partial("host_pair", r)
    return r


def gpt2_step():
    """GPT-2 XL (random weights) at 1024 x 8: the reference row's recipe, with a trace."""
    from transformers import GPT2Config, GPT2LMHeadModel
    cfg = GPT2Config(n_layer=48, n_embd=1600, n_head=25, vocab_size=50257, n_positions=2048,
                     activation_function="gelu_new", tie_word_embeddings=True)
    g.place_model(GPT2LMHeadModel, cfg)
    model = g.MODEL["model"]
    return g.run_steps("gpt2-xl-s1024-b8-autocast", model, 1024, 8, 2, 8, 2)


if __name__ == "__main__":
    sampler = g.start_sampler()
    g.section("meta", 1, g.meta)
    g.section("lm_head", 20, lm_head)
    g.section("sdpa_dropout", 20, sdpa_dropout)
    g.section("host_pair", 90, host_pair)
    g.section("gpt2_step", 60, gpt2_step)
    if sampler:
        sampler.terminate()
    log("done in", round(g.time.time() - g.T0, 1), "s")
    g.save()
