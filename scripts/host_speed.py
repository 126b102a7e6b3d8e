#!/usr/bin/env python3
"""How fast the host ran, step by step, across Kineto traces of eager PyTorch.

The same operator costs the host the same work in every run of a recipe, so
the median CPU duration of one operator name, in one profiled step, read
against the same operator's on the same thread of a reference step, is that step's
host speed relative to the reference, thread by thread (the Python thread,
pid == tid, runs the forward and the optimizer; the autograd engine's thread
the backward). Operators that launch nothing and allocate
nothing (as_strided, view, t, transpose, reshape, detach) measure the CPU
alone; the others (empty_strided, mul, to, linear, mm, add_) add the
caching allocator and the CUDA launch. The speed of a step is the median of
those ratios over the operators both steps hold at least --min-calls times.

This is the measurement behind the host-speed spread in docs/host-time.md
(operators that launch nothing ran 0.79-1.67 times the Qwen2.5-0.5B trace's
across the other H200 traces' steps; lostflops/host_speed.h
kHostSpeedFastest, kHostSpeedSlowest).

Usage: scripts/host_speed.py REFERENCE.json.gz TRACE.json.gz [...]
Example:
  scripts/host_speed.py ../shared/traces/h200/h200-qwen05-like-s2048-b1-autocast.json.gz \
      ../shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz
Python 3 standard library only.
"""
import argparse
import gzip
import json
import os
import statistics
import sys

CPU_ONLY = ["aten::as_strided", "aten::view", "aten::t", "aten::transpose", "aten::reshape", "aten::detach"]
LAUNCHING = ["aten::empty_strided", "aten::mul", "aten::to", "aten::linear", "aten::mm", "aten::add_"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f).get("traceEvents", [])


def thread_of(e):
    """"main" for the Python thread (pid == tid: the forward and the optimizer), else "autograd"."""
    return "main" if e.get("tid") == e.get("pid") else "autograd"


def step_number(name):
    tail = name.rsplit("#", 1)[-1]
    return int(tail) if tail.isdigit() else -1


def steps_of(events):
    """{step name: {thread: {operator: [durations]}}} for each ProfilerStep#N window."""
    windows = sorted(
        (e["ts"], e["ts"] + e["dur"], e["name"])
        for e in events
        if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#") and e.get("cat") == "user_annotation"
    )
    out = {}
    for start, end, name in windows:
        out.setdefault(name, {"start": start, "end": end, "ops": {"main": {}, "autograd": {}}})
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op":
            continue
        name = e.get("name")
        if name not in CPU_ONLY and name not in LAUNCHING:
            continue
        for step in out.values():
            if step["start"] <= e["ts"] < step["end"]:
                step["ops"][thread_of(e)].setdefault(name, []).append(float(e["dur"]))
                break
    return out


def speed(ops, ref, names, min_calls):
    ratios = []
    for n in names:
        a, b = ops.get(n, []), ref.get(n, [])
        if len(a) >= min_calls and len(b) >= min_calls and statistics.median(b) > 0:
            ratios.append(statistics.median(a) / statistics.median(b))
    return (statistics.median(ratios), len(ratios)) if ratios else (float("nan"), 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reference")
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--ref-step", default=None, help="the reference trace's step (default: its last)")
    ap.add_argument("--min-calls", type=int, default=20)
    args = ap.parse_args()

    ref_steps = steps_of(load(args.reference))
    if not ref_steps:
        sys.exit(f"{args.reference}: no ProfilerStep# annotation")
    ref_name = args.ref_step or max(ref_steps, key=step_number)
    if ref_name not in ref_steps:
        sys.exit(f"{args.reference}: no {ref_name} annotation")
    ref = ref_steps[ref_name]["ops"]
    print(f"host time per operator against {os.path.basename(args.reference)} {ref_name}, thread by thread"
          " (median of the operators' median ratios, operators counted; > 1: the host ran slower)")
    print(f"{'trace':52s} {'step':15s} {'main cpu-only':>14s} {'main launching':>15s}"
          f" {'autograd cpu-only':>18s} {'autograd launching':>19s}")
    for path in args.traces:
        for name, step in sorted(steps_of(load(path)).items(), key=lambda kv: step_number(kv[0])):
            cells = []
            for thread in ("main", "autograd"):
                for names in (CPU_ONLY, LAUNCHING):
                    r, n = speed(step["ops"][thread], ref[thread], names, args.min_calls)
                    cells.append(f"{r:.2f} ({n})")
            print(f"{os.path.basename(path)[:52]:52s} {name:15s} {cells[0]:>14s} {cells[1]:>15s}"
                  f" {cells[2]:>18s} {cells[3]:>19s}")


if __name__ == "__main__":
    main()
