#!/usr/bin/env python3
"""The issue's independent count (issue 35, "Measured memory"): the peaks that
`lostflops trace` prints for the shared memory traces equal the maxima of
their CUDA [memory] events, counted here with Python's own gzip and json and
nothing of the project's.

Usage: memory_peaks_independent.py LOSTFLOPS_BINARY TRACE_DIR
The memory traces are the files of TRACE_DIR (../shared/traces/h200, kept
outside the project) that hold a "[memory]" event; exits 77 (CTest's skip)
when TRACE_DIR is absent or holds none. Checked: `trace --format json` gives
the maxima to the byte, and the text table prints them in GiB (2^30 bytes)
to two decimals.
"""
import gzip
import json
import os
import subprocess
import sys

SKIP = 77
CUDA = 1  # c10::DeviceType::CUDA, the "Device Type" argument of a CUDA [memory] event


def open_trace(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def count_memory(trace):
    """(events, peak allocated, peak reserved) of the CUDA [memory] events, or None."""
    n, alloc, resv = 0, None, None
    for e in trace.get("traceEvents", []):
        if e.get("name") != "[memory]":
            continue
        args = e.get("args", {})
        if args.get("Device Type") != CUDA:
            continue
        n += 1
        a, r = args["Total Allocated"], args["Total Reserved"]
        alloc = a if alloc is None else max(alloc, a)
        resv = r if resv is None else max(resv, r)
    return (n, alloc, resv) if n else None


def check(binary, path, counted):
    n, alloc, resv = counted
    failures = []
    out = subprocess.run([binary, "trace", "--format", "json", path], capture_output=True, text=True, check=True)
    mem = json.loads(out.stdout)["ranks"][0]["memory"]
    for key, want in (("events", n), ("peak_allocated_bytes", alloc), ("peak_reserved_bytes", resv)):
        if mem[key] != want:
            failures.append(f"{path}: json {key} {mem[key]} != counted {want}")
    text = subprocess.run([binary, "trace", path], capture_output=True, text=True, check=True).stdout
    lines = text.splitlines()
    at = next((i for i, l in enumerate(lines) if l.startswith("Memory (")), None)
    if at is None or at + 2 >= len(lines):
        return failures + [f"{path}: no Memory table in the text output"]
    cols = lines[at + 2].split()  # rank device peak_alloc_GiB peak_resv_GiB ...
    want_text = (f"{alloc / 2**30:.2f}", f"{resv / 2**30:.2f}")
    if (cols[2], cols[3]) != want_text:
        failures.append(f"{path}: text peaks {cols[2]} / {cols[3]} GiB != counted {want_text[0]} / {want_text[1]}")
    print(f"{os.path.basename(path)}: {n} CUDA [memory] events, peak allocated {alloc:.0f} B "
          f"({want_text[0]} GiB), reserved {resv:.0f} B ({want_text[1]} GiB); trace printed {cols[2]} / {cols[3]}")
    return failures


def main():
    binary, trace_dir = sys.argv[1], sys.argv[2]
    if not os.path.isdir(trace_dir):
        print(f"{trace_dir} not found (real traces are kept outside the project): skipped")
        return SKIP
    failures, checked = [], 0
    for name in sorted(os.listdir(trace_dir)):
        path = os.path.join(trace_dir, name)
        if not name.endswith((".json", ".json.gz")):
            continue
        counted = count_memory(open_trace(path))
        if counted is None:
            continue
        checked += 1
        failures += check(binary, path, counted)
    if checked == 0:
        print(f"no trace with [memory] events in {trace_dir}: skipped")
        return SKIP
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
