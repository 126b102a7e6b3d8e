#!/usr/bin/env python3
"""Host costs of an eager Hugging Face training step outside its operators, from a Kineto trace.

The component measurement behind calibration hf_backward_call_us,
hf_zero_grad_tensor_us, hf_sync_us and hf_expert_loop_us
(data/calibration/default.yaml, docs/host-time.md). Read on one profiled step
(ProfilerStep#2) of the traces of shared/traces/h200/, which run
`model(**batch).loss.backward(); opt.step(); opt.zero_grad()` and a device
synchronisation per step:

- the backward call: on the thread that runs the step, from the end of the
  forward's last top-level operator (`aten::ones_like`, the loss gradient
  torch.autograd.backward makes) to the start of the first autograd node on
  the engine's thread (Engine::execute: the graph task, the walk over the
  graph that counts each node's dependencies, the hand-off to the device
  thread); and from the end of the last node to the start of the
  `Optimizer.step` annotation (the graph task's completion, the main thread
  woken, the Python up to the optimizer). No profiler event falls in either
  stretch, so no correction applies.
- zero_grad: the `Optimizer.zero_grad` annotation over the optimizer's
  parameter tensors (--param-tensors, src/workload/host_ops_hf.cpp
  hf_param_tensors: 218 on the Qwen2.5-0.5B shape).
- synchronisations: each blocking device-to-host copy (a `Memcpy DtoH`
  kernel followed by the host's cudaStreamSynchronize), what issued it
  (transformers' packed-sequence check, `aten::is_nonzero`; PyTorch's
  `_grouped_mm` fallback copying its offsets, `aten::_grouped_mm`), and the
  GPU's idle from the copy's end to the next kernel's start, less the
  profiler's cost of the host events recorded in between (--event-us, the
  per-event cost scripts/eager_host_costs.py prints for the same machine).
- the `_grouped_mm` fallback's loop (aten/src/ATen/native/GroupedMMUtils.h
  `_grouped_mm_fallback`: per group select, slice, item, mm): each call's host
  time less its synchronisation, less the profiler's cost of its events, per
  group (--groups, the local experts).

Usage: scripts/eager_step_costs.py TRACE.json.gz [--param-tensors N] [--groups G] [--event-us US]
Examples (the calibration's figures):
  scripts/eager_step_costs.py ../shared/traces/h200/h200-qwen05-like-s2048-b1-autocast.json.gz --param-tensors 218
  scripts/eager_step_costs.py ../shared/traces/h200/h200-qwen3-moe-4l-s4096-b1-autocast.json.gz --param-tensors 47 --groups 128
Python 3 standard library only.
"""
import argparse
import bisect
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_op_interval import profiled_step, top_level  # noqa: E402  (same folder)

HOST_CATS = ("cpu_op", "cuda_runtime", "cuda_driver", "user_annotation")
GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")


def step_window(trace, step):
    """The trace's events, its step annotation, the step's complete events and its host events' times."""
    ev, s = profiled_step(trace, step)
    xs = [e for e in ev if e.get("ph") == "X" and s["ts"] <= e.get("ts", -1) < s["ts"] + s["dur"]]
    return ev, s, xs, sorted(e["ts"] for e in xs if e.get("cat") in HOST_CATS)


def runtime_calls(xs):
    """CUDA runtime and driver calls by their correlation id (a kernel's launch)."""
    return {e["args"]["correlation"]: e for e in xs
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}


def enclosing(ops, e):
    """The outermost CPU operator on e's thread that holds e (or None)."""
    held = [o for o in ops if o["tid"] == e["tid"] and o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"]]
    return min(held, key=lambda o: o["ts"]) if held else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--param-tensors", type=int, default=0)
    ap.add_argument("--groups", type=int, default=0)
    ap.add_argument("--event-us", type=float, default=1.44)
    ap.add_argument("--step", default="ProfilerStep#2")
    a = ap.parse_args()
    ev, s, xs, host_ts = step_window(a.trace, a.step)
    t0, t1, main_tid = s["ts"], s["ts"] + s["dur"], s["tid"]
    ops = [e for e in xs if e.get("cat") == "cpu_op"]
    bwd = top_level([e for e in ops if e["tid"] != main_tid])
    if not bwd:
        sys.exit(f"{a.trace}: no backward thread in {a.step}")
    fwd = top_level([e for e in ops if e["tid"] == main_tid and e["ts"] < bwd[0]["ts"]])
    opt = [e for e in xs if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.step")]
    zero = [e for e in xs if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.zero_grad")]
    print(f"{a.trace}: {a.step} {s['dur'] / 1e3:.1f} ms profiled")
    start_us = bwd[0]["ts"] - max(e["ts"] + e["dur"] for e in fwd)
    end_us = opt[0]["ts"] - max(e["ts"] + e["dur"] for e in bwd) if opt else float("nan")
    print(f"backward call: {start_us:.0f} us before the first node, {end_us:.0f} us from the last node to"
          f" Optimizer.step; {start_us + end_us:.0f} us per call ({len(bwd)} nodes)")
    if zero:
        z = zero[0]["dur"]
        per = f", {z / a.param_tensors:.2f} us per parameter tensor" if a.param_tensors else ""
        print(f"zero_grad: {z:.0f} us{per}")

    gpu = sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS and t0 <= e["ts"] < t1),
                 key=lambda e: e["ts"])
    runtime = runtime_calls(xs)
    by_issuer = {}
    for i, k in enumerate(gpu[:-1]):
        if k["cat"] != "gpu_memcpy" or "DtoH" not in k["name"]:
            continue
        launch = runtime.get(k["args"].get("correlation"))
        nxt = runtime.get(gpu[i + 1]["args"].get("correlation"))
        if launch is None or nxt is None:
            continue
        end = k["ts"] + k["dur"]
        events = bisect.bisect_left(host_ts, nxt["ts"]) - bisect.bisect_left(host_ts, end)
        idle = gpu[i + 1]["ts"] - end - a.event_us * events
        top = enclosing(ops, launch)
        name = top["name"] if top else "?"
        if name.startswith("autograd::engine::evaluate_function: "):
            name = name.split(": ", 1)[1]
        by_issuer.setdefault(name, []).append(idle)
    for name, idle in sorted(by_issuer.items()):
        print(f"synchronisations under {name}: {len(idle)}, GPU idle after the copy {statistics.mean(idle):.0f} us"
              f" mean, {statistics.median(idle):.0f} us median (profiler's events taken out)")

    calls = [e for e in ops if e["name"] == "aten::_grouped_mm"]
    if calls and a.groups:
        per = []
        for c in calls:
            a0, a1 = c["ts"], c["ts"] + c["dur"]
            waits = sum(e["dur"] for e in xs if e.get("cat") == "cuda_runtime" and e["tid"] == c["tid"]
                        and e["name"] in ("cudaMemcpyAsync", "cudaStreamSynchronize") and a0 <= e["ts"] < a1)
            events = bisect.bisect_left(host_ts, a1) - bisect.bisect_left(host_ts, a0)
            per.append((c["dur"] - waits - a.event_us * events) / a.groups)
        print(f"_grouped_mm fallback: {len(calls)} calls, {statistics.mean(per):.1f} us per group mean"
              f" ({min(per):.1f}-{max(per):.1f}), host time less its copy, sync and profiler events")


if __name__ == "__main__":
    main()
