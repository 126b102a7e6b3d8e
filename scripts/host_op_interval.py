#!/usr/bin/env python3
"""Host time per operator issued from Python, measured on a Kineto trace.

The component measurement behind calibration host_op_us and host_bwd_op_us
(data/calibration/default.yaml, docs/host-time.md). On the thread that issues
the forward (the thread with the most top-level aten::linear / aten::add_
operators), the top-level CPU operators are those not nested in another; the
time from one top-level operator's start to the next is the host's cost of
issuing it, the Python between operators included. A stretch where the host
waits (an operator of >= --max-op-us, or >= --max-gap-us to the next one: a
synchronisation, a blocking copy, the data loader) is not issue cost and is
left out. Printed: the mean of the kept intervals (the figure the model uses:
total issue time over operators), their median, and the median CPU duration
of cudaLaunchKernel on any thread.

Usage: scripts/host_op_interval.py [TRACE.json.gz ...] [--max-op-us 200] [--max-gap-us 500]
Default trace: ../shared/traces/a100-16rank-sendrecv.rank0.json.gz (A100-SXM4-80GB).
Python 3 standard library only.
"""
import argparse
import collections
import gzip
import json
import statistics
import sys

DEFAULT_TRACE = "../shared/traces/a100-16rank-sendrecv.rank0.json.gz"


def load_events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def profiled_step(path, step):
    """The trace's events and its `step` annotation (exits naming both when absent)."""
    events = load_events(path)
    marks = [e for e in events if e.get("name") == step and e.get("cat") == "user_annotation"]
    if not marks:
        sys.exit(f"{path}: no {step} annotation")
    return events, marks[0]


def top_level(ops):
    """Operators not nested in an earlier one (same thread, sorted)."""
    ops = sorted(ops, key=lambda e: (e["ts"], -e["dur"]))
    out, end = [], float("-inf")
    for e in ops:
        if e["ts"] >= end:
            out.append(e)
            end = e["ts"] + e["dur"]
    return out


def forward_thread(by_tid):
    def score(tid):
        return sum(1 for e in by_tid[tid] if e["name"] in ("aten::linear", "aten::add_"))
    return max(by_tid, key=score)


def measure(path, max_op_us, max_gap_us):
    events = [e for e in load_events(path) if e.get("ph") == "X"]
    by_tid = collections.defaultdict(list)
    for e in events:
        if e.get("cat") == "cpu_op":
            by_tid[e["tid"]].append(e)
    if not by_tid:
        raise SystemExit(f"{path}: no cpu_op events")
    tid = forward_thread(by_tid)
    top = top_level(by_tid[tid])
    kept = [b["ts"] - a["ts"] for a, b in zip(top, top[1:])
            if a["dur"] < max_op_us and b["ts"] - a["ts"] < max_gap_us]
    launches = [e["dur"] for e in events
                if e.get("cat") == "cuda_runtime" and e["name"] == "cudaLaunchKernel"]
    print(f"{path}")
    print(f"  forward thread {tid}: {len(top)} top-level operators, {len(kept)} intervals kept "
          f"(operator < {max_op_us:g} us, gap < {max_gap_us:g} us)")
    print(f"  host time per operator: mean {statistics.mean(kept):.1f} us, "
          f"median {statistics.median(kept):.1f} us")
    if launches:
        print(f"  cudaLaunchKernel CPU duration: median {statistics.median(launches):.1f} us "
              f"over {len(launches)} launches")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="*", default=[DEFAULT_TRACE])
    ap.add_argument("--max-op-us", type=float, default=200)
    ap.add_argument("--max-gap-us", type=float, default=500)
    args = ap.parse_args()
    for path in args.traces:
        measure(path, args.max_op_us, args.max_gap_us)
    return 0


if __name__ == "__main__":
    sys.exit(main())
