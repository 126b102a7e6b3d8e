#!/usr/bin/env python3
"""Copy a Kineto trace with chosen kernels slowed, for testing `lostflops trace diff`.

Every GPU kernel event (cat "kernel") whose name is one of the chosen names
gets its duration multiplied by --factor; nothing else changes (start times,
other kernels and CPU events are written as read), so a diff of the input
against the output must find exactly those kernels slower.

Usage: scripts/slow_kernels.py IN.json[.gz] OUT.json[.gz] --names-file FILE [--factor 1.5]
       scripts/slow_kernels.py IN OUT --name KERNEL [--name KERNEL ...]
FILE holds one kernel name per line (names carry spaces, brackets and
templates, so a file avoids shell quoting). Python 3 standard library only.
"""
import argparse
import gzip
import json
import sys


def open_text(path, mode):
    if path.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8", errors="surrogateescape")
    return open(path, mode, encoding="utf-8", errors="surrogateescape")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--name", action="append", default=[], help="kernel name to slow (repeatable)")
    ap.add_argument("--names-file", help="file with one kernel name per line")
    ap.add_argument("--factor", type=float, default=1.5, help="duration multiplier (default 1.5)")
    a = ap.parse_args()
    names = set(a.name)
    if a.names_file:
        with open(a.names_file, encoding="utf-8") as f:
            names.update(line.rstrip("\n") for line in f if line.rstrip("\n"))
    if not names:
        sys.exit("slow_kernels.py: no kernel names given (--name or --names-file)")
    if not a.factor > 0:
        sys.exit("slow_kernels.py: --factor must be > 0")
    with open_text(a.input, "r") as f:
        trace = json.load(f)
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    found = set()
    slowed = 0
    for e in events:
        if isinstance(e, dict) and e.get("cat") == "kernel" and e.get("name") in names:
            dur = e.get("dur")
            if isinstance(dur, (int, float)) and not isinstance(dur, bool):
                e["dur"] = dur * a.factor
                slowed += 1
                found.add(e["name"])
    missing = names - found
    if missing:
        sys.exit("slow_kernels.py: kernels not in the trace: " + ", ".join(sorted(missing)))
    with open_text(a.output, "w") as f:
        json.dump(trace, f, ensure_ascii=False)
    print(f"slowed {slowed} kernel events of {len(found)} names by {a.factor}", file=sys.stderr)


if __name__ == "__main__":
    main()
