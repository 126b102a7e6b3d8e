#!/usr/bin/env python3
"""Host cost of a Hugging Face decoder layer in eager PyTorch, from a Kineto trace.

The component measurement behind calibration hf_host_op_us,
hf_host_bwd_op_us and hf_optimizer_tensor_us (data/calibration/default.yaml,
docs/host-time.md) and the operator counts of framework hf in
src/workload/host_ops.cpp. Read on the host side of one profiled step
(ProfilerStep#2) of a trace of a host-bound run, where the GPU waits for the
CPU and no CPU time is a wait for the GPU:

- forward: on the thread that runs the step, the top-level operators (not
  nested in another) before the backward starts; a layer starts at the input
  RMSNorm's `aten::to` followed by `aten::pow` (two per layer). Per layer:
  operators, profiler events (CPU operators, CUDA runtime and driver calls)
  and the time from one layer's start to the next, as the mean over the
  layers (the step is their sum, so the mean is what a step adds up; the
  median is printed beside it).
- backward: the autograd engine's thread; a layer is the stretch between two
  attention backward nodes (ScaledDotProduct...Backward). Per layer: top-level
  nodes, events, time (mean and median).
- the optimizer: torch.optim's Python before its first operator
  (`Optimizer.step#...` annotation), per parameter tensor.

The profiler adds its own cost to every event it records, and its own
buffer handling (events of category `overhead`, e.g. "Activity Buffer
Request": the profiler's work, not the step's) stalls the thread it lands
on. Given the same run's unprofiled step time (--unprofiled-step-ms, from
shared/reference/h200/measured-runs.csv), the cost per recorded event is
(profiled step - the profiler's own events - unprofiled step) / events of
the step, and the printed per-operator costs have both taken out.

Usage: scripts/eager_host_costs.py TRACE.json.gz --layers N [--unprofiled-step-ms MS]
Example (the calibration's figures):
  scripts/eager_host_costs.py ../shared/traces/h200/h200-qwen05-like-s2048-b1-autocast.json.gz \
      --layers 24 --unprofiled-step-ms 99.4
Python 3 standard library only.
"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_op_interval import profiled_step, top_level  # noqa: E402  (same folder)

EVENT_CATS = ("cpu_op", "cuda_runtime", "cuda_driver")


def medians(rows):
    """Per-column medians of (count, microseconds, events) rows."""
    return [statistics.median(r[i] for r in rows) for i in range(3)]


def means(rows):
    """Per-column means of (count, microseconds, events) rows."""
    return [statistics.mean(r[i] for r in rows) for i in range(3)]


def stall_us(stalls, a, b):
    """Time of the profiler's own stalls inside [a, b)."""
    return sum(min(e["ts"] + e["dur"], b) - max(e["ts"], a) for e in stalls if e["ts"] < b and e["ts"] + e["dur"] > a)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--layers", type=int, required=True)
    ap.add_argument("--unprofiled-step-ms", type=float, default=None)
    ap.add_argument("--step", default="ProfilerStep#2")
    a = ap.parse_args()
    ev, s = profiled_step(a.trace, a.step)
    t0, t1, main_tid = s["ts"], s["ts"] + s["dur"], s["tid"]
    xs = [e for e in ev if e.get("ph") == "X" and e.get("cat") in EVENT_CATS and t0 <= e["ts"] < t1]
    main_ops = [e for e in xs if e["tid"] == main_tid and e["cat"] == "cpu_op"]
    bwd_ops = [e for e in xs if e["tid"] != main_tid and e["cat"] == "cpu_op"]
    if not bwd_ops:
        sys.exit(f"{a.trace}: no backward thread in {a.step}")
    b0 = min(e["ts"] for e in bwd_ops)
    events_step = len(xs) + 3  # and the step's user annotations
    # CUPTI's buffer handling; not "Command Buffer Full" (a launch blocked by
    # a full GPU queue: the GPU's doing, as in lostflops' trace reader).
    stalls = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "overhead" and t0 <= e["ts"] < t1
              and e.get("name") in ("Activity Buffer Request", "Buffer Flush")]
    stall_step = sum(e["dur"] for e in stalls)
    k_us = 0.0
    if a.unprofiled_step_ms:
        k_us = (s["dur"] - stall_step - a.unprofiled_step_ms * 1e3) / events_step
    print(f"{a.trace}: {a.step} {s['dur'] / 1e3:.1f} ms profiled, {events_step} events recorded,"
          f" {stall_step / 1e3:.2f} ms of the profiler's own stalls; profiler cost per event {k_us:.2f} us")

    main_x = [e for e in xs if e["tid"] == main_tid]
    fwd = top_level([e for e in main_ops if e["ts"] < b0])
    norms = [i for i, (p, q) in enumerate(zip(fwd, fwd[1:])) if p["name"] == "aten::to" and q["name"] == "aten::pow"]
    if len(norms) < 2 * a.layers + 1:
        sys.exit(f"found {len(norms)} RMSNorms in the forward, expected {2 * a.layers + 1}")
    starts = norms[0:2 * a.layers:2] + [norms[2 * a.layers]]
    rows = []
    for i in range(a.layers):
        p, q = fwd[starts[i]], fwd[starts[i + 1]]
        n_ev = sum(1 for e in main_x if p["ts"] <= e["ts"] < q["ts"])
        rows.append((starts[i + 1] - starts[i], q["ts"] - p["ts"] - stall_us(stalls, p["ts"], q["ts"]), n_ev))
    f_ops, f_us, f_ev = means(rows)
    print(f"forward per layer: {f_ops:.0f} operators, {f_ev:.0f} events, {f_us:.0f} us (mean; median"
          f" {medians(rows)[1]:.0f} us); outside the layers {starts[0]} before, {len(fwd) - starts[-1]} after")
    print(f"  per operator: {f_us / f_ops:.1f} us profiled, {(f_us - k_us * f_ev) / f_ops:.1f} us without the profiler")

    bwd_x = [e for e in xs if e["tid"] != main_tid]
    bwd = top_level(bwd_ops)
    att = [i for i, e in enumerate(bwd) if "Backward" in e["name"] and ("ScaledDotProduct" in e["name"] or "Attention" in e["name"])]
    brow = []
    for i, j in zip(att, att[1:]):
        p, q = bwd[i], bwd[j]
        brow.append((j - i, q["ts"] - p["ts"] - stall_us(stalls, p["ts"], q["ts"]),
                     sum(1 for e in bwd_x if p["ts"] <= e["ts"] < q["ts"])))
    if brow:
        b_n, b_us, b_ev = means(brow)
        print(f"backward per layer: {b_n:.0f} autograd nodes, {b_ev:.0f} events, {b_us:.0f} us (mean; median"
              f" {medians(brow)[1]:.0f} us); {len(bwd)} nodes in all")
        print(f"  per node: {b_us / b_n:.1f} us profiled, {(b_us - k_us * b_ev) / b_n:.1f} us without the profiler")

    opt = [e for e in ev if e.get("name", "").startswith("Optimizer.step") and t0 <= e["ts"] < t1]
    if opt:
        o = opt[0]
        first = min((e["ts"] for e in main_ops if o["ts"] <= e["ts"] < o["ts"] + o["dur"]), default=None)
        if first is not None:
            print(f"optimizer: {(first - o['ts']):.0f} us of Python before its first operator (divide by the"
                  f" model's parameter tensors)")


if __name__ == "__main__":
    main()
