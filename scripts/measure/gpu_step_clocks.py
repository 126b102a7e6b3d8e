#!/usr/bin/env python3
"""The SM clock under a training step's mix of GEMMs and memory-bound kernels, and
whole eager, compiled and CUDA-graph steps of the Llama-3.2-1B shape, on one GPU.

Why: the step GEMMs of ../shared/traces/h200/ ran 1.11-1.30x faster than the same
shapes back to back (../shared/reference/h200/components/gemm.csv, measured at the
power limit: 1,515 MHz at 678 W); docs/trace-memory.md says no clock was logged.
This script logs the SM clock and board power every ~10 ms from a separate process
(NVML through nvidia-ml-py) while it runs:

  duty     one GEMM (the 1B down projection, 8192 x 8192 -> 2048, bf16) followed by
           k fp32 device copies of 256 MiB, k = 0..16, 2.5 s each: each GEMM's time
           (CUDA events around it), the GEMMs' share of the GPU time, and the clock
           and power in the window (component data: the clock as a function of the
           share of GEMM time)
  warm     after 2 s idle, 60 back-to-back GEMMs timed one by one (how fast the
           clock falls to its power-bound value)
  shapes   the forward GEMMs of the 1B (8,192 tokens) and 3B (16,384 tokens) steps,
           each back to back and each followed by copies of about its own time
  fsdp2    the 1B step at 4096 x 2 under FSDP2 on one rank (bf16 params, foreach
           AdamW): step, peak and clock, no trace
  steps    Hugging Face LlamaForCausalLM (1B shape, random weights) in fp32 with
           bf16 autocast, SDPA, fused AdamW, as ../shared/reference/h200/README.md's
           recipe: seq 4096 x 2 and 512 x 2 eager, 4096 x 2 under torch.compile,
           512 x 2 under torch.compile(mode="reduce-overhead") (CUDA graphs); median
           step, peak allocated, the clock during the timed steps, and a profiler
           trace of each (schedule wait 0, warm-up 1, active 2 or 3)

  sdpa_mask   causal SDPA as is_causal, as an explicit boolean mask (transformers under
           torch.compile) and unmasked, by sequence and head dim (sdpa_mask.csv)
  steps_compiled_s512   the 512 x 2 step under torch.compile (default mode)
  steps_more   out-of-sample steps: the Qwen2.5-0.5B shape at 2048 x 1 eager, compiled and
           with CUDA graphs; Llama-3.2-3B at 4096 x 2 compiled

Usage: python3 scripts/measure/gpu_step_clocks.py OUT_DIR [--budget-s 420] [--sections a,b] [--hf-cache]

The forward runs with use_cache=False and only the loss is kept through the backward, as
the shared reference's traces show (../shared/traces/h200: transformers' packed-sequence
check, which runs only without a cache, and no KV cache). --hf-cache gives the recipe of
the rows in data/measured/h200-steps (2026-11-30 to 12-01): the config's use_cache
(True: transformers builds a DynamicCache in the training forward, two aten::lift_fresh
and two torch.cat a layer, and skips the packed-sequence check) and the model's whole
output held through the backward (its logits among it).
Writes OUT_DIR/{clocks.csv, components.csv, results.json, trace-*.json.gz}; the log is stdout.
Sections start only while the budget allows; a section still running at the budget's
end is stopped (SIGALRM) and the others' files are kept.
"""
import csv
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "."
ONLY = sys.argv[sys.argv.index("--sections") + 1].split(",") if "--sections" in sys.argv else None
BUDGET_S = float(sys.argv[sys.argv.index("--budget-s") + 1]) if "--budget-s" in sys.argv else 420.0
HF_CACHE = "--hf-cache" in sys.argv  # the recipe of data/measured/h200-steps' rows (the docstring)
T0 = time.time()
os.makedirs(OUT, exist_ok=True)
RESULTS = {"sections": {}, "budget_s": BUDGET_S}


def log(*a):
    line = f"[{time.time() - T0:6.1f}s] " + " ".join(str(x) for x in a)
    print(line, flush=True)


def save():
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(RESULTS, f, indent=1, sort_keys=True)


SAMPLER = r"""
import subprocess, sys, time
f = open(sys.argv[1], "w")
f.write("t_s,sm_mhz,mem_mhz,power_w,temp_c,reasons\n")
try:
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
except Exception:
    q = ["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu",
         "--format=csv,noheader,nounits"]
    while True:
        t = time.time()
        v = subprocess.run(q, capture_output=True, text=True).stdout.strip().replace(" ", "")
        f.write(f"{t:.4f},{v},-1\n")
        f.flush()
        time.sleep(0.02)
def reasons():
    for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        try:
            return getattr(pynvml, fn)(h)
        except Exception:
            pass
    return -1
while True:
    t = time.time()
    sm = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
    mem = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)
    p = pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0
    temp = pynvml.nvmlDeviceGetTemperature(h, 0)
    f.write(f"{t:.4f},{sm},{mem},{p:.1f},{temp},{reasons()}\n")
    f.flush()
    time.sleep(0.01)
"""

CLOCKS = os.path.join(OUT, "clocks.csv")


def start_sampler():
    try:
        return subprocess.Popen([sys.executable, "-c", SAMPLER, CLOCKS])
    except Exception as e:  # noqa: BLE001
        log("sampler failed:", e)
        return None


def clock_window(t_from, t_to):
    """Median SM clock, power and the samples' count between two time.time() stamps."""
    try:
        rows = []
        with open(CLOCKS) as f:
            next(f)
            for line in f:
                p = line.strip().split(",")
                if len(p) >= 4 and t_from <= float(p[0]) <= t_to:
                    rows.append((float(p[1]), float(p[3]), int(p[5]) if len(p) > 5 else -1))
        if not rows:
            return {"samples": 0}
        sm = sorted(r[0] for r in rows)
        pw = sorted(r[1] for r in rows)
        reasons = sorted({r[2] for r in rows})
        return {"samples": len(rows), "sm_mhz_median": sm[len(sm) // 2], "sm_mhz_min": sm[0],
                "sm_mhz_max": sm[-1], "power_w_median": pw[len(pw) // 2], "power_w_max": pw[-1],
                "reasons": reasons[:8]}
    except Exception as e:  # noqa: BLE001
        return {"error": repr(e)}


class Budget(Exception):
    pass


def on_alarm(signum, frame):
    raise Budget()


signal.signal(signal.SIGALRM, on_alarm)


def section(name, need_s, fn):
    if ONLY is not None and name not in ONLY:
        return
    left = BUDGET_S - (time.time() - T0)
    if left < need_s:
        log(f"skip {name}: {left:.0f} s left, needs {need_s}")
        RESULTS["sections"][name] = {"skipped": f"{left:.0f} s left"}
        save()
        return
    log(f"start {name} ({left:.0f} s left)")
    signal.alarm(max(1, int(left)))
    t = time.time()
    try:
        RESULTS["sections"][name] = fn() or {}
    except Budget:
        log(f"{name}: stopped at the budget")
        RESULTS["sections"].setdefault(name, {})["stopped"] = "budget"
    except Exception as e:  # noqa: BLE001
        import traceback
        log(f"{name} failed: {e!r}\n{traceback.format_exc()}")
        RESULTS["sections"].setdefault(name, {})["error"] = repr(e)
    finally:
        signal.alarm(0)
    RESULTS["sections"][name]["wall_s"] = round(time.time() - t, 2)
    save()


import torch  # noqa: E402

DEV = torch.device("cuda")
torch.manual_seed(1234)
COMPONENT_ROWS = []


def ev_ms(pairs):
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in pairs]


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def timed_gemm(a, b):
    """a @ b between two timing events; the pair, for ev_ms."""
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    torch.matmul(a, b)
    e1.record()
    return e0, e1


def timed_mix(a, b, copies, dst, src, seconds):
    """GEMM a @ b then `copies` device copies, for `seconds`; the GEMMs' event times (ms)
    of the last 80 % and the whole loop's GPU time."""
    pairs, t_end = [], time.time() + seconds
    loop0, loop1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    n = 0
    w0 = time.time()
    loop0.record()
    while time.time() < t_end:
        for _ in range(20):
            pairs.append(timed_gemm(a, b))
            for _ in range(copies):
                dst.copy_(src)
            n += 1
        torch.cuda.synchronize()
    loop1.record()
    w1 = time.time()
    gemm = ev_ms(pairs)
    total = loop0.elapsed_time(loop1)
    keep = gemm[len(gemm) // 5:]
    return {"gemms": n, "gemm_ms_median": median(keep), "gemm_share": sum(gemm) / total,
            "loop_ms": total, "t_from": w0 + (w1 - w0) / 5, "t_to": w1}


def duty():
    m, k, n = 8192, 8192, 2048
    a = torch.randn(m, k, device=DEV, dtype=torch.bfloat16)
    b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
    src = torch.randn(64 * 1024 * 1024, device=DEV)  # 256 MiB fp32
    dst = torch.empty_like(src)
    for _ in range(20):
        torch.matmul(a, b)
        dst.copy_(src)
    torch.cuda.synchronize()
    out = []
    for copies in (0, 1, 2, 3, 5, 8, 16):
        r = timed_mix(a, b, copies, dst, src, 2.5)
        c = clock_window(r.pop("t_from"), r.pop("t_to"))
        flops = 2.0 * m * k * n
        row = {"what": "duty", "shape": f"{m}x{k}x{n}", "copies": copies, **r, **c,
               "gemm_tflops": flops / (r["gemm_ms_median"] * 1e-3) / 1e12}
        log("duty", {k2: (round(v, 4) if isinstance(v, float) else v) for k2, v in row.items()})
        out.append(row)
        COMPONENT_ROWS.append(row)
    # how fast the clock falls: idle, then back-to-back GEMMs one by one
    torch.cuda.synchronize()
    time.sleep(2.0)
    w0 = time.time()
    pairs = [timed_gemm(a, b) for _ in range(60)]
    ms = ev_ms(pairs)
    w1 = time.time()
    warm = {"gemm_ms": [round(x, 4) for x in ms], "clock": clock_window(w0 - 0.5, w1 + 0.2)}
    log("warm-up GEMMs after 2 s idle (ms):", warm["gemm_ms"][:10], "...", warm["gemm_ms"][-5:])
    return {"rows": out, "after_idle": warm}


def shapes():
    src = torch.randn(64 * 1024 * 1024, device=DEV)
    dst = torch.empty_like(src)
    t0 = time.time()
    dst.copy_(src)
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    for _ in range(20):
        dst.copy_(src)
    e1.record()
    torch.cuda.synchronize()
    copy_ms = e0.elapsed_time(e1) / 20
    out = []
    # (tokens, k, n) of the forward GEMMs long enough (>= ~90 us) for the host to keep
    # up with a per-GEMM event pair: q (= o), gate (= up), down
    gemms = {"1b q": (8192, 2048, 2048), "1b gate": (8192, 2048, 8192), "1b down": (8192, 8192, 2048),
             "3b q": (16384, 3072, 3072), "3b gate": (16384, 3072, 8192), "3b down": (16384, 8192, 3072)}
    for name, (tok, k, n) in gemms.items():
        a = torch.randn(tok, k, device=DEV, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=DEV, dtype=torch.bfloat16)
        for _ in range(5):
            torch.matmul(a, b)
        for mode in ("back_to_back", "mixed"):
            if mode == "back_to_back":
                copies, d, s = 0, dst, src
            else:
                # one copy of about the GEMM's own time: half the GPU time in GEMMs
                r0 = timed_mix(a, b, 0, dst, src, 0.3)
                elems = max(1 << 20, min(src.numel(), int(src.numel() * r0["gemm_ms_median"] / copy_ms)))
                copies, d, s = 1, dst[:elems], src[:elems]
            r = timed_mix(a, b, copies, d, s, 0.8)
            c = clock_window(r.pop("t_from"), r.pop("t_to"))
            row = {"what": f"shape {name} {mode}", "shape": f"{tok}x{k}x{n}", "copies": copies,
                   **r, **c, "gemm_tflops": 2.0 * tok * k * n / (r["gemm_ms_median"] * 1e-3) / 1e12}
            log(name, mode, round(row["gemm_ms_median"], 4), "ms", round(row["gemm_tflops"], 1),
                "TFLOP/s share", round(row["gemm_share"], 3), "clock", c.get("sm_mhz_median"),
                "power", c.get("power_w_median"))
            out.append(row)
            COMPONENT_ROWS.append(row)
    return {"copy_ms_256MiB": copy_ms, "rows": out}


MODEL = {}


SHAPES = {  # LlamaConfig keys: the H200 table's shapes (../shared/reference/h200/runs)
    "1b": dict(vocab_size=128256, hidden_size=2048, intermediate_size=8192, num_hidden_layers=16,
               num_attention_heads=32, num_key_value_heads=8, head_dim=64, rope_theta=500000.0),
    "3b": dict(vocab_size=128256, hidden_size=3072, intermediate_size=8192, num_hidden_layers=28,
               num_attention_heads=24, num_key_value_heads=8, head_dim=128, rope_theta=500000.0),
    "qwen05": dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                   num_attention_heads=14, num_key_value_heads=2, head_dim=64, rope_theta=1000000.0),
}


def build_model(shape="1b"):
    from transformers import LlamaConfig, LlamaForCausalLM
    cfg = LlamaConfig(max_position_embeddings=131072, rms_norm_eps=1e-5, tie_word_embeddings=True,
                      hidden_act="silu", **SHAPES[shape])
    place_model(LlamaForCausalLM, cfg)


def place_model(cls, cfg):
    """A transformers model of class `cls` from `cfg` on the GPU (random weights, SDPA, fused AdamW) in MODEL."""
    MODEL.clear()
    torch.cuda.empty_cache()
    try:
        cfg._attn_implementation = "sdpa"
    except Exception as e:  # noqa: BLE001
        log("attn_implementation not set:", e)
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    with torch.device("cuda"):
        model = cls(cfg)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    MODEL.update(model=model, opt=opt, base=base, vocab=cfg.vocab_size)
    log("model built:", sum(p.numel() for p in model.parameters()), "parameters")


def run_steps(tag, fn_model, seq, batch, warm, timed, active, autocast=True):
    model, opt = MODEL["model"], MODEL["opt"]
    ids = torch.randint(0, MODEL["vocab"], (batch, seq), device=DEV)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            if HF_CACHE:
                out = fn_model(input_ids=ids, labels=ids)
                loss = out.loss
            else:
                loss = fn_model(input_ids=ids, labels=ids, use_cache=False).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize()

    torch.cuda.reset_peak_memory_stats()
    w = time.time()
    for _ in range(warm):
        step()
    warm_s = time.time() - w
    times = []
    t_from = time.time()
    for _ in range(timed):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    t_to = time.time()
    peak = (torch.cuda.max_memory_allocated() - MODEL["base"]) / 2 ** 30
    res = {"seq": seq, "batch": batch, "warm_s": round(warm_s, 2), "step_s": times,
           "step_s_median": median(times), "tokens_per_s": seq * batch / median(times),
           "peak_allocated_GiB": peak, "clock": clock_window(t_from, t_to)}
    log(tag, "median step", round(res["step_s_median"], 5), "s", round(res["tokens_per_s"], 1), "tok/s",
        "peak", round(peak, 2), "GiB clock", res["clock"].get("sm_mhz_median"), "MHz power",
        res["clock"].get("power_w_median"), "W (warm-up", res["warm_s"], "s)")
    if not active:
        return res
    from torch.profiler import ProfilerActivity, profile, schedule
    path = os.path.join(OUT, f"trace-{tag}.json")
    p_from = time.time()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=active, repeat=1)) as prof:
        for _ in range(1 + active):
            step()
            prof.step()
    res["clock_profiled"] = clock_window(p_from, time.time())
    prof.export_chrome_trace(path)
    with open(path, "rb") as fi, gzip.open(path + ".gz", "wb") as fo:
        shutil.copyfileobj(fi, fo)
    os.remove(path)
    log(tag, "trace", os.path.getsize(path + ".gz"), "bytes")
    return res


def steps_eager():
    build_model()
    r = {"s4096": run_steps("1b-s4096-b2-autocast", MODEL["model"], 4096, 2, 2, 8, 2)}
    r["s512"] = run_steps("1b-s512-b2-autocast", MODEL["model"], 512, 2, 3, 30, 3)
    return r


def steps_compiled():
    torch._dynamo.reset()
    cm = torch.compile(MODEL["model"])
    return run_steps("1b-s4096-b2-autocast-compiled", cm, 4096, 2, 3, 8, 2)


def steps_graphs():
    torch._dynamo.reset()
    cm = torch.compile(MODEL["model"], mode="reduce-overhead")
    return run_steps("1b-s512-b2-autocast-cudagraphs", cm, 512, 2, 4, 30, 3)


def steps_fsdp2():
    """torchtitan's recipe on one rank (../shared/reference/h200/README.md fsdp2): the clock only."""
    import torch.distributed as dist
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    torch._dynamo.reset()
    MODEL.clear()
    torch.cuda.empty_cache()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29517", RANK="0", WORLD_SIZE="1")
    dist.init_process_group("nccl", rank=0, world_size=1)
    build_model()
    model = MODEL["model"]
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    MODEL["opt"] = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    return run_steps("1b-s4096-b2-fsdp2", model, 4096, 2, 2, 8, 0, autocast=False)


def sdpa_mask():
    """Causal SDPA three ways, bf16, the backend SDPA picks (cuDNN on the H200): is_causal=True;
    an explicit boolean causal mask (b, 1, s, s) with is_causal=False, what transformers passes
    under torch.compile (masking_utils._ignore_causal_mask_sdpa is False while tracing); and no
    mask at all (the full square). Forward and forward+backward, median of do_bench."""
    import torch.nn.functional as F
    from triton.testing import do_bench
    rows = []
    for d in (64, 128):
        for s in (512, 1024, 2048, 4096, 8192):
            b, h = 2, (32 if d == 64 else 16)
            q, k, v = (torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
                       for _ in range(3))
            mask = torch.ones(s, s, device=DEV, dtype=torch.bool).tril()[None, None].expand(b, 1, s, s).contiguous()
            g = torch.randn(b, h, s, d, device=DEV, dtype=torch.bfloat16)
            for how, kw in (("is_causal", {"is_causal": True}), ("bool_mask", {"attn_mask": mask}),
                            ("full", {})):
                def fwd():
                    return F.scaled_dot_product_attention(q, k, v, **kw)

                def fwd_bwd():
                    F.scaled_dot_product_attention(q, k, v, **kw).backward(g)
                try:
                    f_ms = do_bench(fwd, warmup=10, rep=40, return_mode="median")
                    fb_ms = do_bench(fwd_bwd, warmup=10, rep=40, return_mode="median")
                except Exception as e:  # noqa: BLE001
                    log("sdpa", how, s, d, "failed:", e)
                    continue
                full = 4.0 * b * h * s * s * d  # forward FLOPs of the full square
                row = {"how": how, "batch": b, "heads": h, "seq": s, "head_dim": d, "fwd_ms": f_ms,
                       "fwd_bwd_ms": fb_ms, "fwd_tflops_causal_count": full / 2 / (f_ms * 1e-3) / 1e12,
                       "bwd_tflops_causal_count": 2.5 * full / 2 / ((fb_ms - f_ms) * 1e-3) / 1e12}
                rows.append(row)
                log("sdpa", how, "s", s, "d", d, "fwd", round(f_ms, 4), "ms fwd+bwd", round(fb_ms, 4), "ms")
    with open(os.path.join(OUT, "sdpa_mask.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    return {"rows": len(rows)}


def steps_compiled_s512():
    build_model()
    torch._dynamo.reset()
    cm = torch.compile(MODEL["model"])
    return run_steps("1b-s512-b2-autocast-compiled", cm, 512, 2, 3, 30, 3)


def steps_more():
    """Out-of-sample checks: the Qwen2.5-0.5B shape at 2048 x 1 eager, compiled and with CUDA
    graphs; Llama-3.2-3B at 4096 x 2 compiled."""
    r = {}
    build_model("qwen05")
    r["qwen_eager"] = run_steps("qwen05-s2048-b1-autocast", MODEL["model"], 2048, 1, 3, 20, 0)
    torch._dynamo.reset()
    r["qwen_compiled"] = run_steps("qwen05-s2048-b1-autocast-compiled", torch.compile(MODEL["model"]),
                                   2048, 1, 3, 20, 2)
    save_partial("steps_more", r)
    torch._dynamo.reset()
    r["qwen_cudagraphs"] = run_steps("qwen05-s2048-b1-autocast-cudagraphs",
                                     torch.compile(MODEL["model"], mode="reduce-overhead"), 2048, 1, 4, 20, 2)
    save_partial("steps_more", r)
    build_model("3b")
    torch._dynamo.reset()
    r["3b_compiled"] = run_steps("3b-s4096-b2-autocast-compiled", torch.compile(MODEL["model"]), 4096, 2, 3, 6, 2)
    return r


def save_partial(name, r):
    RESULTS["sections"][name] = dict(r)
    save()


def meta():
    m = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
         "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime())}
    try:
        import transformers
        m["transformers"] = transformers.__version__
    except Exception:  # noqa: BLE001
        pass
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,power.limit,clocks.max.sm,"
                            "clocks.sm,temperature.gpu", "--format=csv"], capture_output=True, text=True,
                           timeout=20)
        m["nvidia_smi"] = q.stdout.strip()
    except Exception as e:  # noqa: BLE001
        m["nvidia_smi"] = repr(e)
    log("meta", m)
    return m


if __name__ == "__main__":
    sampler = start_sampler()
    time.sleep(1.0)
    section("meta", 1, meta)
    section("duty", 60, duty)
    section("shapes", 40, shapes)
    section("steps_eager", 40, steps_eager)
    section("steps_compiled", 90, steps_compiled)
    section("steps_graphs", 90, steps_graphs)
    section("steps_fsdp2", 30, steps_fsdp2)
    section("sdpa_mask", 20, sdpa_mask)
    section("steps_compiled_s512", 80, steps_compiled_s512)
    section("steps_more", 100, steps_more)
    if COMPONENT_ROWS:
        keys = ["what", "shape", "copies", "gemms", "gemm_ms_median", "gemm_tflops", "gemm_share",
                "loop_ms", "samples", "sm_mhz_median", "sm_mhz_min", "sm_mhz_max", "power_w_median",
                "power_w_max"]
        with open(os.path.join(OUT, "components.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for row in COMPONENT_ROWS:
                w.writerow(row)
    if sampler:
        sampler.terminate()
    log("done in", round(time.time() - T0, 1), "s")
    save()
