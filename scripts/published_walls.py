#!/usr/bin/env python3
"""Where the search ranks each published run's plan, how much faster its best
is by the model, and the walls that make the difference (issue 23).

For every job of data/published/runs/: `lostflops search JOB --rank-plan
--top 1` gives the published plan's rank; `--format json` the best plan's
settings (`set`); `lostflops estimate --format json` on the job as published
and with the best's settings gives each plan's step time, breakdown (walls,
seconds per step), peak memory and warnings. Prints one Markdown row per run:
rank, the best's predicted speed-up over the published plan (published step
time / best step time - 1), peak memory of both against the GPU's capacity,
the model's error on the published plan against the run's measured tokens/s
(data/published/published-runs.csv), the settings that differ, and every wall that differs by at least 5 % of the
gap (published - best, seconds per step), largest first.

Usage: scripts/published_walls.py [path/to/lostflops]
"""
import csv
import glob
import json
import os
import re
import subprocess
import sys

WALLS = {
    "compute_s": "compute", "recompute_s": "recompute", "memory_bound_s": "memory_bound",
    "kernel_overhead_s": "overhead", "host_bound_s": "host_bound", "optimizer_s": "optimizer",
    "tp_comm_s": "tp_comm", "cp_comm_s": "cp_comm", "ep_comm_s": "ep_comm", "dp_comm_s": "dp_comm",
    "pp_bubble_s": "pp_bubble", "pp_p2p_s": "pp_p2p",
}


def run(exe, *args):
    r = subprocess.run([exe, *args], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"{exe} {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def estimate(exe, job, sets):
    args = ["estimate", job, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    return json.loads(run(exe, *args))


def plan_keys(j):
    p = j["job"]["parallel"]
    out = {k: p.get(k) for k in ("tp", "cp", "pp", "vpp", "dp", "zero", "recompute", "recompute_layers",
                                  "sequence_parallel", "cp_comm_type")}
    out["mbs"] = j["job"]["training"].get("micro_batch_size")
    if (out.get("cp") or 1) == 1:
        out.pop("cp_comm_type", None)
    return out


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else "build/lostflops"
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    jobs = sorted(glob.glob(os.path.join(root, "data/published/runs/*.json")))
    with open(os.path.join(root, "data/published/published-runs.csv")) as f:
        measured = {r["name"]: float(r["tokens_per_s_per_gpu"]) for r in csv.DictReader(f)}
    print("| run | rank | best's speed-up | model on the published plan vs measured | peak GB published / best "
          "(capacity) | settings (published -> best) | walls (published - best, s/step) |")
    print("|---|---|---|---|---|---|---|")
    top10 = 0
    for job in jobs:
        name = os.path.basename(job)[:-5]
        table = run(exe, "search", job, "--rank-plan", "--top", "1")
        m = re.search(r"compare: rank (\d+)", table)
        rank = int(m.group(1)) if m else None
        if rank is not None and rank <= 10:
            top10 += 1
        best = json.loads(run(exe, "search", job, "--rank-plan", "--top", "1", "--format", "json"))["top"][0]
        pub = estimate(exe, job, [])
        alt = estimate(exe, job, best["set"])
        t_pub, t_best = pub["step_time_s"], alt["step_time_s"]
        gap = t_pub - t_best
        speedup = t_pub / t_best - 1
        cap = pub["memory"]["capacity_bytes"] / 1e9
        mem = f"{pub['memory']['peak_bytes'] / 1e9:.1f} / {alt['memory']['peak_bytes'] / 1e9:.1f} ({cap:.1f})"
        a, b = plan_keys(pub), plan_keys(alt)
        diff = ", ".join(f"{k} {a.get(k)}->{b.get(k)}" for k in a if a.get(k) != b.get(k))
        walls = []
        for key, label in WALLS.items():
            d = pub["breakdown"][key] - alt["breakdown"][key]
            if abs(d) >= 0.05 * abs(gap) and abs(d) >= 0.0005:
                walls.append((abs(d), f"{label} {d:+.3f}"))
        walls = "; ".join(w for _, w in sorted(walls, reverse=True))
        if (b.get("cp") or 1) > 1:
            walls += f" (the best's cp_comm: {alt['breakdown']['cp_comm_s']:.3f})"
        warn = [w for w in alt.get("warnings", []) if "cannot launch" in w]
        if warn:
            walls += " (best: " + "; ".join(warn) + ")"
        err = f"{100 * (pub['tokens_per_s_per_gpu'] / measured[name] - 1):+.1f} %" if name in measured else "-"
        print(f"| {name} | {rank} | {100 * speedup:.1f} % ({t_pub:.3f} -> {t_best:.3f} s) | {err} | {mem} | {diff} "
              f"| {walls} |")
    print(f"\npublished plans in the top 10: {top10} of {len(jobs)}")


if __name__ == "__main__":
    main()
