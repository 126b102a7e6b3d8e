#!/usr/bin/env python3
"""Writes N per-rank trace summaries (docs/trace-summary-format.md) for the
`trace merge` scale benchmark (bench/trace_merge_scale.sh), one file per rank.

The ranks are copies of the ranks of real summaries written by
`lostflops trace ... --summary-out` (the TEMPLATE files, e.g. of traces
from `lostflops trace synth`): rank r is template r mod len(templates) with
its rank, source, host and process-group members renumbered, and every time
scaled by a seeded factor within +-JITTER percent (rank SLOW: x1.5), so the
merge has a spread to rank and one rank to find. Same arguments, same files.

usage: make_summaries.py OUT_DIR N TEMPLATE.json... [--gpus-per-node 8]
       [--jitter-pct 2] [--slow-rank R] [--seed 1]
"""
import argparse
import copy
import json
import os
import random

TIME_KEYS = ("_us",)  # every key ending in _us is a time in microseconds


def scale_times(value, factor):
    """The same JSON value with every *_us number multiplied by factor."""
    if isinstance(value, dict):
        return {k: (round(v * factor) if k.endswith(TIME_KEYS) and isinstance(v, (int, float)) and k != "first_comm_start_us"
                    else scale_times(v, factor)) for k, v in value.items()}
    if isinstance(value, list):
        return [scale_times(v, factor) for v in value]
    return value


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out_dir")
    p.add_argument("n", type=int)
    p.add_argument("templates", nargs="+")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--jitter-pct", type=float, default=2.0)
    p.add_argument("--slow-rank", type=int, default=-1)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    templates = []
    for t in a.templates:
        with open(t, encoding="utf-8") as f:
            templates.extend(json.load(f)["ranks"])
    if not templates:
        raise SystemExit("make_summaries.py: the templates hold no ranks")
    os.makedirs(a.out_dir, exist_ok=True)
    rng = random.Random(a.seed)
    for r in range(a.n):
        rank = copy.deepcopy(templates[r % len(templates)])
        factor = 1.0 + rng.uniform(-a.jitter_pct, a.jitter_pct) / 100.0
        if r == a.slow_rank:
            factor *= 1.5
        rank = scale_times(rank, factor)
        rank["rank"] = r
        rank["source"] = "rank%05d.json" % r
        rank["host"] = "node%04d" % (r // a.gpus_per_node)
        rank["gpus_per_node"] = a.gpus_per_node
        tp_base = r - r % a.gpus_per_node
        for g in rank.get("process_groups", []):
            if g.get("desc") == "tp":
                g["ranks"] = json.dumps(list(range(tp_base, tp_base + a.gpus_per_node)))
            else:  # data parallel: the ranks with the same place in their node, the whole list as PyTorch writes it
                g["name"] = str(2 + r % a.gpus_per_node)
                g["ranks"] = json.dumps(list(range(r % a.gpus_per_node, a.n, a.gpus_per_node)))
        doc = {"format": "lostflops-trace-summary", "version": 2, "ranks": [rank]}
        with open(os.path.join(a.out_dir, "rank%05d.summary.json" % r), "w", encoding="utf-8") as f:
            json.dump(doc, f)


if __name__ == "__main__":
    main()
