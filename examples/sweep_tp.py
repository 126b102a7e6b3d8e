#!/usr/bin/env python3
"""Sweep tensor parallelism for one job and plot step time and MFU.

Notebook-style use of the Python module: one estimate per tp (pp fixed, dp
following from the GPU count), a table on standard output, and a plot
(sweep_tp.png) when matplotlib is installed.

    PYTHONPATH=build/python python3 examples/sweep_tp.py [JOB] [--pp N] [--out sweep_tp.png]

JOB defaults to data/published/runs/megatron24-h100-gpt-70b.json.
"""
import argparse
import os
import sys

import lostflops

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("job", nargs="?", default=os.path.join(HERE, "..", "data/published/runs/megatron24-h100-gpt-70b.json"))
    ap.add_argument("--pp", type=int, default=None, help="fix pipeline stages (default: the job's)")
    ap.add_argument("--out", default="sweep_tp.png", help="plot file (matplotlib only)")
    args = ap.parse_args()

    rows = []
    for tp in (1, 2, 4, 8):
        sets = ["parallel.tp=%d" % tp]
        if tp == 1:
            sets += ["parallel.sequence_parallel=false", "parallel.tp_comm_overlap=false"]
        if args.pp:
            sets.append("parallel.pp=%d" % args.pp)
        try:
            r = lostflops.estimate(args.job, set=sets)
        except lostflops.LostflopsError as e:  # a plan the job does not admit (heads % tp, ...)
            print("tp %d: %s" % (tp, e), file=sys.stderr)
            continue
        b = r["breakdown"]
        rows.append((tp, r["step_time_s"], r["mfu"], r["memory"]["peak_bytes"] / 2**30, r["memory"]["fits"],
                     b["tp_comm_s"], b["pp_bubble_s"]))

    print("%4s %12s %7s %10s %5s %10s %12s" % ("tp", "step_time_s", "mfu", "peak_GiB", "fits", "tp_comm_s", "pp_bubble_s"))
    for tp, step, mfu, gib, fits, tpc, bub in rows:
        print("%4d %12.3f %7.3f %10.1f %5s %10.3f %12.3f" % (tp, step, mfu, gib, "yes" if fits else "no", tpc, bub))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: table only)", file=sys.stderr)
        return 0
    fig, ax = plt.subplots(1, 2, figsize=(9, 3.5))
    ax[0].plot([r[0] for r in rows], [r[1] for r in rows], "o-")
    ax[0].set_xlabel("tp")
    ax[0].set_ylabel("step time (s)")
    ax[1].plot([r[0] for r in rows], [r[2] for r in rows], "o-")
    ax[1].set_xlabel("tp")
    ax[1].set_ylabel("MFU")
    for a in ax:
        a.set_xscale("log", base=2)
    fig.tight_layout()
    fig.savefig(args.out)
    print("plot: %s" % args.out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
