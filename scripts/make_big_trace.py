#!/usr/bin/env python3
"""Make a large Kineto trace from a real one, for the trace-reader benchmark.

The events of the input trace are written again and again, each copy shifted
in time by the span of the original (so the copies follow each other like
further profiler steps) and with correlation ids, External ids and
ProfilerStep numbers moved out of the way of the previous copies. The result
is uncompressed JSON of at least --size-mb megabytes.

Usage: scripts/make_big_trace.py [IN.json[.gz]] OUT.json [--size-mb 1100]
IN defaults to ../shared/traces/a100-8rank.rank3.json.gz (a real trace kept
outside the project); a trace of `lostflops trace synth` serves as well.
Python 3 standard library only.
"""
import argparse
import gzip
import json
import os
import re
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", metavar="[IN] OUT")
    ap.add_argument("--size-mb", type=float, default=1100.0)
    a = ap.parse_args()
    if len(a.paths) > 2:
        ap.error("expected [IN] OUT")
    a.output = a.paths[-1]
    a.input = a.paths[0] if len(a.paths) == 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "traces", "a100-8rank.rank3.json.gz")
    if not os.path.isfile(a.input):
        sys.exit("make_big_trace.py: %s not found (give IN, e.g. a trace of `lostflops trace synth`)" % a.input)

    trace = load(a.input)
    events = trace.get("traceEvents", [])
    timed = [e for e in events if isinstance(e.get("ts"), (int, float))]
    if not timed:
        sys.exit("no timed events in " + a.input)
    t0 = min(e["ts"] for e in timed)
    t1 = max(e["ts"] + (e.get("dur") or 0) for e in timed)
    period = (t1 - t0) * 1.01 + 1
    max_corr = max((e.get("args", {}).get("correlation", 0) for e in events
                    if isinstance(e.get("args"), dict)
                    and isinstance(e["args"].get("correlation"), int)), default=0) + 1
    steps = [int(m.group(1)) for e in events
             for m in [re.match(r"ProfilerStep#(\d+)", str(e.get("name", "")))] if m]
    step_shift = (max(steps) - min(steps) + 1) if steps else 0
    meta = {k: v for k, v in trace.items() if k != "traceEvents"}
    head = json.dumps(meta, indent=1)[:-2]  # without the closing brace
    target = int(a.size_mb * 1e6)

    written = 0
    with open(a.output, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(head + ',\n  "traceEvents": [\n')
        copy = 0
        first = True
        while written < target:
            dt = copy * period
            for e in events:
                if copy > 0 and e.get("ph") == "M":
                    continue
                e2 = dict(e)
                if isinstance(e2.get("ts"), (int, float)):
                    e2["ts"] = round(e2["ts"] + dt, 3)
                if isinstance(e2.get("id"), int):
                    e2["id"] = e2["id"] + copy * max_corr
                args = e2.get("args")
                if isinstance(args, dict) and copy > 0:
                    args = dict(args)
                    for key in ("correlation", "External id"):
                        if isinstance(args.get(key), int):
                            args[key] = args[key] + copy * max_corr
                    e2["args"] = args
                name = str(e2.get("name", ""))
                m = re.match(r"ProfilerStep#(\d+)$", name)
                if m and copy > 0:
                    e2["name"] = "ProfilerStep#%d" % (int(m.group(1)) + copy * step_shift)
                line = ("    " if first else ",\n    ") + json.dumps(e2)
                first = False
                out.write(line)
                written += len(line)
            copy += 1
        out.write("\n  ]\n}\n")
    print("%s: %d copies, %.1f MB" % (a.output, copy, written / 1e6))


if __name__ == "__main__":
    main()
