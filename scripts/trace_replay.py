#!/usr/bin/env python3
"""Replay one profiled step with the profiler's host cost taken out: what the run would take unprofiled.

A check on a trace's walls (docs/host-time.md), not a calibration. The host
issues each kernel at its launch's time in the trace, made earlier by
--event-us for every host event (CPU operator, CUDA runtime or driver call,
annotation) recorded before it in the step, and by the profiler's own stalls
(`overhead` events); each synchronisation (cudaStreamSynchronize,
cudaDeviceSynchronize) waits until the GPU has run what it was given,
replayed. The GPU runs each kernel, copy and memset for its traced duration,
in order, from the later of its launch (plus 5 us of launch latency) and the
previous one's end. Printed: the replayed step, the GPU's busy time and its
idle between the first kernel and the last, split by pass (before the
backward thread starts, the backward, from Optimizer.step on).

Usage: scripts/trace_replay.py TRACE.json.gz [--event-us 1.44] [--step ProfilerStep#2]
Example: scripts/trace_replay.py ../shared/traces/h200/h200-qwen3-moe-4l-s4096-b1-autocast.json.gz
Python 3 standard library only.
"""
import argparse
import bisect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from eager_step_costs import GPU_CATS, runtime_calls, step_window  # noqa: E402  (same folder)

LAUNCH_US = 5.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--event-us", type=float, default=1.44)
    ap.add_argument("--step", default="ProfilerStep#2")
    a = ap.parse_args()
    ev, s, xs, host_ts = step_window(a.trace, a.step)
    t0, t1, main_tid = s["ts"], s["ts"] + s["dur"], s["tid"]
    stalls = sorted((e["ts"], e["dur"]) for e in xs if e.get("cat") == "overhead")
    runtime = runtime_calls(xs)
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in GPU_CATS
           and e.get("args", {}).get("correlation") in runtime]
    waits = [e for e in xs if e["name"] in ("cudaStreamSynchronize", "cudaDeviceSynchronize")]
    bwd0 = min((e["ts"] for e in xs if e.get("cat") == "cpu_op" and e["tid"] != main_tid), default=t1)
    opt0 = min((e["ts"] for e in xs if e.get("cat") == "user_annotation" and e["name"].startswith("Optimizer.step")),
               default=t1)

    def removed(t):
        stall = sum(min(d, t - ts) for ts, d in stalls if ts < t)
        return a.event_us * bisect.bisect_left(host_ts, t) + stall

    items = sorted([(runtime[k["args"]["correlation"]]["ts"], 0, k) for k in gpu] + [(w["ts"], 1, w) for w in waits],
                   key=lambda x: (x[0], x[1]))
    shift, gpu_end, busy, idle = 0.0, None, 0.0, {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    for t, is_wait, e in items:
        host = t - removed(t) + shift
        if is_wait:
            resume = max(host, gpu_end if gpu_end is not None else host)
            shift += (resume - host) - e["dur"]
            continue
        start = host + LAUNCH_US if gpu_end is None else max(host + LAUNCH_US, gpu_end)
        if gpu_end is not None:
            idle["forward" if t < bwd0 else "backward" if t < opt0 else "optimizer"] += start - gpu_end
        gpu_end = start + e["dur"]
        busy += e["dur"]
    end = max(gpu_end or t0, t1 - removed(t1) + shift)
    print(f"{a.trace}: {a.step} {s['dur'] / 1e3:.1f} ms profiled, replayed {(end - t0) / 1e3:.1f} ms at"
          f" {a.event_us:.2f} us per event; GPU busy {busy / 1e3:.1f} ms, idle "
          + ", ".join(f"{k} {v / 1e3:.1f}" for k, v in idle.items()) + " ms")


if __name__ == "__main__":
    main()
