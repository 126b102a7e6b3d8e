#!/usr/bin/env python3
"""The slow paths of issue 21 as whole processes: wall time, CPU time (user +
system) and peak resident memory of each command, medians over --runs runs
(os.wait4's resource usage of the child); bytes written to standard output;
and, when the Python module is importable, lostflops.estimate on a plan that
does not fit, in process (timeit). Reported in notes and README, never
asserted. The machine's load average is printed first: on a shared machine
compare CPU times, and wall times only from unloaded runs.

    python3 bench/slow_paths.py [--binary build/lostflops] [--runs 5] [--python build/python]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEARCH_JOB = os.path.join(ROOT, "examples/llama3.1-405b-16384xh100-search.yaml")
GOODPUT_JOB = os.path.join(ROOT, "examples/llama3.1-405b-16384xh100-goodput.yaml")
# Llama-3.1-405B on 16,384 H100 with tp 8, pp 16, vpp 1 and ZeRO 0: does not fit (README "Search").
NOT_FIT = ["--set", "model.preset=llama3.1-405b", "--set", "cluster.num_gpus=16384", "--set",
           "training.seq_length=8192", "--set", "training.global_batch_size=2048", "--set", "parallel.tp=8",
           "--set", "parallel.pp=16", "--set", "parallel.vpp=1", "--set", "parallel.zero=0"]
DIVISORS = ["--set", "cluster.num_gpus=110880"]

CASES = [
    # (name, arguments, runs: "all" or "few")
    ("estimate, plan does not fit", ["estimate"] + NOT_FIT, "all"),
    ("estimate --advice, plan does not fit", ["estimate", "--advice"] + NOT_FIT, "all"),
    ("estimate gpt3-175b-8xa100 (nothing fits)", ["estimate", os.path.join(ROOT, "examples/gpt3-175b-8xa100.yaml")], "all"),
    ("search --format json (default)", ["search", SEARCH_JOB, "--format", "json"], "all"),
    ("search --format csv (default)", ["search", SEARCH_JOB, "--format", "csv"], "all"),
    ("search (table)", ["search", SEARCH_JOB], "all"),
    ("search 110,880 GPUs, batch 2,520", ["search", SEARCH_JOB] + DIVISORS + ["--set", "training.global_batch_size=2520"], "all"),
    ("search 110,880 GPUs, batch 110,880", ["search", SEARCH_JOB] + DIVISORS + ["--set", "training.global_batch_size=110880"], "all"),
    ("goodput --simulate 1000000", ["goodput", GOODPUT_JOB, "--simulate", "1000000", "--seed", "1"], "few"),
    ("search --format json --top all", ["search", SEARCH_JOB, "--format", "json", "--top", "all"], "few"),
]


def run_once(cmd):
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    n = 0
    while True:
        chunk = p.stdout.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - start
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, n, os.waitstatus_to_exitcode(status)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/lostflops"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--few", type=int, default=3, help="runs of the long cases")
    ap.add_argument("--python", default=os.path.join(ROOT, "build/python"), help="where the lostflops package is")
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    ap.add_argument("--calls", type=int, default=20, help="Python calls per timing")
    a = ap.parse_args()
    print("load average at start: %.2f %.2f %.2f" % os.getloadavg())
    print("%-42s %5s %10s %10s %9s %12s %4s" % ("case", "runs", "wall s", "cpu s", "peak MiB", "stdout bytes", "exit"))
    for name, args, kind in CASES:
        if a.only and a.only not in name:
            continue
        runs = a.runs if kind == "all" else a.few
        res = [run_once([a.binary] + args) for _ in range(runs)]
        med = lambda i: statistics.median(r[i] for r in res)
        print("%-42s %5d %10.3f %10.3f %9.1f %12d %4d" % (name, runs, med(0), med(1), med(2), res[0][3], res[0][4]))
        sys.stdout.flush()
    if a.only and "python" not in a.only:
        return
    sys.path.insert(0, a.python)
    try:
        import lostflops
    except ImportError as e:
        print("python: lostflops not importable from %s (%s)" % (a.python, e))
        return
    sets = [NOT_FIT[i + 1] for i in range(0, len(NOT_FIT), 2)]
    cases = [("python estimate, does not fit", lambda: lostflops.estimate(set=sets))]
    try:
        lostflops.estimate(set=sets, advice=False)
        cases.append(("python estimate advice=True", lambda: lostflops.estimate(set=sets, advice=True)))
    except TypeError:  # a module from before advice=
        pass
    for name, f in cases:
        number = a.calls
        wall = timeit.repeat(f, number=number, repeat=max(3, a.runs))
        cpu = timeit.repeat(f, number=number, repeat=max(3, a.runs), timer=time.process_time)
        print("%-42s %5d %10.6f %10.6f (medians of %d x %d calls, per call)" % (
            name, len(wall), statistics.median(wall) / number, statistics.median(cpu) / number, len(wall), number))
    print("load average at end: %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()
