#!/usr/bin/env python3
"""Where a torch.compile'd Hugging Face step holds its memory, moment by moment, on one GPU.

Why: `build/lostflops validate data/measured/h200-steps/measured-runs.csv` (2026-12-04)
predicts the compiled rows' peaks low (1B 512 x 2 -8.7 %, 3B 4096 x 2 -13.1 %) and the
1B 4096 x 2 compiled row within 0.4 %. Those peaks were read with the counter reset
before the warm-up steps (gpu_step_clocks.run_steps), so compilation is inside them, and
their traces hold no allocator events. The compiled traces' kernels say the backward
casts no weight again (one weight-sized cast a linear forward, `triton_poi_fused__to_copy_t_*`;
one backward, the fp32 conversion of its gradient), so the forward's bf16 weight copies
are kept for the backward, where lostflops has them recomputed (docs/memory.md,
"torch.compile"); and the loss is fused (`prepare_softmax_online`), where lostflops
prices transformers' eager loss. This script measures what decides it, after the
warm-up, for each step below:

  phases    one step with the peak counter reset at each boundary: the most allocated
            and reserved in the forward (the loss included), the backward, the
            optimizer step and zero_grad, and what is allocated at each boundary
  peak      the allocator's history over one more step (torch.cuda.memory
            _record_memory_history): the blocks alive at the step's most allocated,
            grouped by size (count x bytes) and by the innermost frame that made them
  trace     one profiled step with profile_memory=True (`[memory]` events, which
            `lostflops trace --job` compares with the predicted peaks)

Steps (the reference's recipe, gpu_step_clocks.run_steps: fp32 weights + bf16 autocast,
SDPA, fused AdamW, use_cache=False, only the loss kept through the backward):
  eager_1b_s512            the control: lostflops is within 0.3 % of its eager peak
  compiled_1b_s512         torch.compile (default mode)
  compiled_1b_s4096
  compiled_qwen05_s2048
  compiled_3b_s4096

Usage: python3 scripts/measure/gpu_compiled_memory.py OUT_DIR [--budget-s 420] [--sections a,b]
Writes OUT_DIR/{results.json, clocks.csv, trace-*-memory.json.gz}; the log is stdout.
Sections, the budget and the clock sampler are gpu_step_clocks.py's.
"""
import collections
import gc
import gzip
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_step_clocks as g  # noqa: E402  (OUT, budget, sections, sampler, models)

torch = g.torch
log = g.log
GIB = 2.0 ** 30
HISTORY_ENTRIES = 400_000  # allocator events kept: one step of the 3B shape makes far fewer


def step_fns(fn_model, seq, batch):
    model_opt = g.MODEL["opt"]
    ids = torch.randint(0, g.MODEL["vocab"], (batch, seq), device=g.DEV)

    def forward():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return fn_model(input_ids=ids, labels=ids, use_cache=False).loss

    def step():
        loss = forward()
        loss.backward()
        model_opt.step()
        model_opt.zero_grad(set_to_none=True)

    return forward, step


def phases(forward, opt):
    """The most allocated and reserved in each part of one step, and what is allocated between them."""
    base = g.MODEL["base"]
    r = {}
    torch.cuda.synchronize()
    r["start_allocated_GiB"] = (torch.cuda.memory_allocated() - base) / GIB
    torch.cuda.reset_peak_memory_stats()

    def mark(name):
        torch.cuda.synchronize()
        r[name + "_peak_allocated_GiB"] = (torch.cuda.max_memory_allocated() - base) / GIB
        r[name + "_peak_reserved_GiB"] = torch.cuda.max_memory_reserved() / GIB
        r[name + "_end_allocated_GiB"] = (torch.cuda.memory_allocated() - base) / GIB
        torch.cuda.reset_peak_memory_stats()

    loss = forward()
    mark("forward")
    loss.backward()
    mark("backward")
    opt.step()
    mark("optimizer")
    opt.zero_grad(set_to_none=True)
    del loss
    mark("zero_grad")
    parts = ("forward", "backward", "optimizer", "zero_grad")
    r["step_peak_allocated_GiB"] = max(r[p + "_peak_allocated_GiB"] for p in parts)
    r["step_peak_in"] = max(parts, key=lambda p: r[p + "_peak_allocated_GiB"])
    return r


def frame_label(frames):
    """The innermost Python frame outside torch's own (the model's code, or Inductor's generated module)."""
    for f in frames or []:
        name = str(f.get("filename", ""))
        if not name.endswith(".py") or ("/torch/" in name and "torchinductor" not in name):
            continue
        return f"{os.path.basename(name)}:{f.get('line', '?')}:{f.get('name', '?')}"
    return "-"


def live_at_peak(step):
    """The blocks alive at the step's most allocated (the allocator's history), grouped."""
    torch.cuda.synchronize()
    torch.cuda.memory._record_memory_history(stacks="python", max_entries=HISTORY_ENTRIES)
    try:
        step()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    events = snap["device_traces"][torch.cuda.current_device()]
    # A block is back in the pool at free_completed (after the streams that used it);
    # an allocator that records no such event frees at free_requested.
    free = "free_completed" if any(e.get("action") == "free_completed" for e in events) else "free_requested"
    live, total, best, best_at = {}, 0, -1, 0
    for i, e in enumerate(events):
        a = e.get("action")
        if a == "alloc":
            live[e["addr"]] = (e["size"], frame_label(e.get("frames")))
            total += e["size"]
        elif a == free and e["addr"] in live:
            total -= live.pop(e["addr"])[0]
        if total > best:
            best, best_at = total, i
    # Replay to the peak: the blocks alive there.
    live, total = {}, 0
    for e in events[:best_at + 1]:
        a = e.get("action")
        if a == "alloc":
            live[e["addr"]] = (e["size"], frame_label(e.get("frames")))
        elif a == free and e["addr"] in live:
            live.pop(e["addr"])
    by_size = collections.Counter(size for size, _ in live.values())
    by_frame = collections.defaultdict(lambda: [0, 0])
    for size, label in live.values():
        by_frame[label][0] += 1
        by_frame[label][1] += size
    return {
        "events": len(events),
        "history_full": len(events) >= HISTORY_ENTRIES,
        "blocks_alive_before_the_step_not_seen": "the history starts with the step: blocks made before it "
                                                 "(weights, optimizer state) are not in these lists",
        "step_allocations_at_peak_GiB": sum(s for s, _ in live.values()) / GIB,
        "by_size": [{"bytes": s, "count": c, "GiB": s * c / GIB}
                    for s, c in sorted(by_size.items(), key=lambda x: -x[0] * x[1])[:40]],
        "by_frame": [{"frame": k, "count": v[0], "GiB": v[1] / GIB}
                     for k, v in sorted(by_frame.items(), key=lambda x: -x[1][1])[:40]],
    }


def memory_trace(tag, step):
    from torch.profiler import ProfilerActivity, profile, schedule
    path = os.path.join(g.OUT, f"trace-{tag}-memory.json")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
                 schedule=schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(2):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    with open(path, "rb") as fi, gzip.open(path + ".gz", "wb") as fo:
        shutil.copyfileobj(fi, fo)
    os.remove(path)
    return os.path.getsize(path + ".gz")


def measure(name, tag, shape, seq, batch, compiled, warm=3):
    """One step's three measurements (the docstring); `name` the section, `tag` the trace's."""
    torch._dynamo.reset()  # the previous step's compiled graphs, before the model's base is read
    gc.collect()
    g.build_model(shape)
    fn_model = torch.compile(g.MODEL["model"]) if compiled else g.MODEL["model"]
    forward, step = step_fns(fn_model, seq, batch)
    for _ in range(warm):
        step()
    r = {"shape": shape, "seq": seq, "batch": batch, "compiled": compiled}
    r["phases"] = phases(forward, g.MODEL["opt"])
    log(tag, "phases", {k: round(v, 3) if isinstance(v, float) else v for k, v in r["phases"].items()})
    g.save_partial(name, r)
    try:
        r["peak"] = live_at_peak(step)
        log(tag, "at the peak", round(r["peak"]["step_allocations_at_peak_GiB"], 3), "GiB made in the step;",
            "largest sizes", r["peak"]["by_size"][:6])
    except Exception as e:  # noqa: BLE001  (an older torch without the history API)
        r["peak"] = {"error": repr(e)}
        log(tag, "history failed:", e)
    g.save_partial(name, r)
    r["trace_bytes"] = memory_trace(tag, step)
    log(tag, "memory trace", r["trace_bytes"], "bytes")
    return r


if __name__ == "__main__":
    sampler = g.start_sampler()
    g.section("meta", 1, g.meta)
    for name, need_s, shape, seq, batch, compiled in (
            ("eager_1b_s512", 20, "1b", 512, 2, False),
            ("compiled_1b_s512", 60, "1b", 512, 2, True),
            ("compiled_1b_s4096", 60, "1b", 4096, 2, True),
            ("compiled_qwen05_s2048", 60, "qwen05", 2048, 1, True),
            ("compiled_3b_s4096", 90, "3b", 4096, 2, True)):
        tag = f"{'compiled' if compiled else 'eager'}-{shape}-s{seq}-b{batch}-autocast"
        g.section(name, need_s, lambda a=(name, tag, shape, seq, batch, compiled): measure(*a))
    if sampler:
        sampler.terminate()
    log("done in", round(g.time.time() - g.T0, 1), "s")
    g.save()
