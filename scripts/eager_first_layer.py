#!/usr/bin/env python3
"""The first decoder layer after transformers' packed-sequence check, from a PyTorch profiler trace.

The component measurement behind HostOps::lead_fwd and LayerTime::lead_wait_s
(src/estimate/host_time.cpp, docs/host-time.md "The first layer after the check").
After the check's copy to the host (a Memcpy DtoH) the host has no lead: the GPU
waits through the first layer's operators before its attention core until the
host gets ahead. For one profiled step (ProfilerStep#N, the CPU annotation) it
prints:

- the top-level operators on the step's thread between the check
  (aten::is_nonzero) and the first layer's input norm (aten::pow): the
  embedding's operators after the check (HostOps::embed_fwd_after_check);
- the GPU's idle from the check's copy to the first layer's first kernel (the
  rotary tables and the hooks before it), and from there to the first layer's
  SDPA kernel (the stretch the model prices), with the gaps over 10 us;
- for layers 0, 1 and the middle one: the kernels from the layer's input
  RMSNorm (its aten::pow, two a layer) to the next layer's, split into GEMMs,
  SDPA and the rest, and how much of each runs before SDPA (the stretch);
- under FSDP2: the median host time of a layer's FSDP::pre_forward
  annotation and from one layer's to the next's (the layer's whole forward
  on the host, its hooks and any checkpoint wrapper's Python included).

A layer starts at an aten::pow kernel, the input norm's; under FSDP2 its
pre-forward hook's casts and copies come before it, counted in the first
figure. Kernels are on any stream, in start order; a gap is a kernel's start
less the latest end before it.

Usage: scripts/eager_first_layer.py TRACE.json.gz [--step 1]
Example: scripts/eager_first_layer.py ../shared/traces/h200/h200-llama3.2-1b-s4096-b2-autocast.json.gz
Python 3 standard library only.
"""
import argparse
import bisect
import gzip
import json
import statistics


def load(path):
    with gzip.open(path) if path.endswith(".gz") else open(path) as f:
        tr = json.load(f)
    return tr["traceEvents"] if isinstance(tr, dict) else tr


def kind(name):
    if "sdpa" in name or "fmha" in name or "flash" in name:
        return "sdpa"
    if "nvjet" in name or "gemm" in name or "cutlass" in name:
        return "gemm"
    return "other"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--step", type=int, default=1, help="ProfilerStep#N (default 1)")
    a = ap.parse_args()
    ev = load(a.trace)
    xs = [e for e in ev if e.get("ph") == "X"]
    step = [e for e in xs if e.get("name") == f"ProfilerStep#{a.step}" and e.get("cat") == "user_annotation"]
    if not step:
        raise SystemExit(f"{a.trace}: no ProfilerStep#{a.step} annotation")
    t0 = step[0]["ts"]
    t1 = t0 + step[0]["dur"]
    kernels = sorted((e for e in xs if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and t0 <= e["ts"] < t1),
                     key=lambda e: e["ts"])
    launches = {e["args"].get("correlation"): e for e in xs if e.get("cat") == "cuda_runtime" and "args" in e}
    ops = sorted((e for e in xs if e.get("cat") == "cpu_op"), key=lambda e: e["ts"])
    starts = [o["ts"] for o in ops]

    def launcher(k):  # the outermost operator on the launching thread around the launch
        r = launches.get(k.get("args", {}).get("correlation"))
        if r is None:
            return ""
        name, i = "", bisect.bisect_right(starts, r["ts"]) - 1
        while i >= 0 and r["ts"] - ops[i]["ts"] < 1e6:
            o = ops[i]
            if o.get("tid") == r.get("tid") and o["ts"] <= r["ts"] <= o["ts"] + o["dur"]:
                name = o["name"]
            i -= 1
        return name

    gaps, end = [], t0
    for k in kernels:
        gaps.append(max(0.0, k["ts"] - end))
        end = max(end, k["ts"] + k["dur"])
    copy = next((i for i, k in enumerate(kernels) if "DtoH" in k["name"]), None)
    pows = [i for i, k in enumerate(kernels) if "elementwise" in k["name"] and launcher(k) == "aten::pow"]
    if len(pows) < 4:
        raise SystemExit(f"{a.trace}: fewer than two layers' norms in step {a.step}")
    if copy is None or copy > pows[0]:  # no check (a KV cache): from the step's first kernel
        print(f"step {a.step}: no copy to the host before the first layer (no check): from the step's start")
        copy = -1
    first = next(i for i in pows if i > copy)
    core = next(i for i in range(first, len(kernels)) if kind(kernels[i]["name"]) == "sdpa")
    tid = step[0].get("tid")
    check = next((o for o in ops if o.get("tid") == tid and t0 <= o["ts"] < t1 and o["name"] == "aten::is_nonzero"), None)
    norm = next((o for o in ops if check and o.get("tid") == tid and o["ts"] > check["ts"] and o["name"] == "aten::pow"),
                None)
    if check and norm:
        after, end_top = [], check["ts"] + check["dur"]
        for o in ops:  # top-level: not inside the one before it
            if o.get("tid") == tid and end_top <= o["ts"] < norm["ts"]:
                after.append(o["name"])
                end_top = o["ts"] + o["dur"]
        print(f"step {a.step}: {len(after)} top-level operators between the check and the first layer's norm: "
              + ", ".join(after))
    print(f"step {a.step}: idle after the check's copy (or the step's start) to the first layer's first kernel "
          f"{sum(gaps[copy + 1:first + 1]):.0f} us; from there to its SDPA {sum(gaps[first + 1:core + 1]):.0f} us "
          f"({kernels[core]['ts'] - kernels[first]['ts']:.0f} us of wall)")
    for i in range(copy + 1, core + 1):
        if gaps[i] > 10:
            print(f"  gap {gaps[i]:6.1f} us before {kernels[i]['name'][:48]} (launched by {launcher(kernels[i]) or '-'})")
    layer_starts = pows[pows.index(first)::2]  # the input norm's; the post-attention norm's between
    for n in sorted({0, 1, len(layer_starts) // 2}):
        if n + 1 >= len(layer_starts):
            continue
        lo, hi = layer_starts[n], layer_starts[n + 1]
        tot, pre, before = {"gemm": 0.0, "sdpa": 0.0, "other": 0.0}, {"gemm": 0.0, "other": 0.0}, True
        for k in kernels[lo:hi]:
            c = kind(k["name"])
            before = before and c != "sdpa"
            tot[c] += k["dur"]
            if before:
                pre[c] += k["dur"]
        print(f"layer {n}: {hi - lo} kernels, GEMM {tot['gemm']:.0f} us, SDPA {tot['sdpa']:.0f} us, "
              f"other {tot['other']:.0f} us; before SDPA: GEMM {pre['gemm']:.0f} us, other {pre['other']:.0f} us "
              f"({100 * pre['other'] / max(tot['other'], 1e-9):.0f} % of the other), idle {sum(gaps[lo + 1:hi]):.0f} us")
    hooks = sorted((e for e in xs if e.get("tid") == tid and t0 <= e["ts"] < t1
                    and e.get("name", "").startswith("FSDP::pre_forward (model.layers.")), key=lambda e: e["ts"])
    if len(hooks) > 1:
        between = [b["ts"] - a["ts"] for a, b in zip(hooks, hooks[1:])]
        # From the layer before's residual add (its last operator) to the hook:
        # FSDP2's post-forward hook, and any checkpoint wrapper's Python.
        adds = [o for o in ops if o.get("tid") == tid and t0 <= o["ts"] < t1 and o["name"] == "aten::add"]
        lead_in = []
        for h in hooks[1:]:
            before = [o["ts"] + o["dur"] for o in adds if o["ts"] + o["dur"] <= h["ts"]]
            if before:
                lead_in.append(h["ts"] - max(before))
        print(f"FSDP2: {len(hooks)} layers' pre-forward hooks, median {statistics.median(e['dur'] for e in hooks):.0f} us; "
              f"a layer's forward on the host (hook to hook) median {statistics.median(between):.0f} us; "
              f"from the layer before's last add to the hook median {statistics.median(lead_in):.0f} us")


if __name__ == "__main__":
    main()
