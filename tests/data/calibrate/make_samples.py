#!/usr/bin/env python3
"""Writes the constructed nccl-tests sample outputs of this folder.

They are NOT measurements: times follow t = latency + S*F/B (F the nccl-tests
bus factor, B a plausible bus bandwidth), printed in the layouts of
NVIDIA/nccl-tests (src/common.cu before 2023, src/util.cu after). Re-run to
regenerate: python3 make_samples.py
"""


def fnum(value, width):
    # nccl-tests src/util.cu getFloatStr: 2 decimals while they fit the width.
    power = 0
    v = 1
    while value >= v:
        power += 1
        v *= 10
    if power < width - 2:
        return f"{value:{width}.2f}"
    if power < width - 1:
        return f"{value:{width}.1f}"
    if power < width + 1:
        return f"{value:{width}.0f}"
    return f"{value:{width}.1e}"


def old_time(t):
    # src/common.cu (2019-2022): %7.2f, %7.1f above 100 us, %7.0f above 10 ms.
    if t > 10000:
        return f"{t:7.0f}"
    if t > 100:
        return f"{t:7.1f}"
    return f"{t:7.2f}"


def sizes(lo, hi, factor=2):
    s = lo
    while s <= hi:
        yield s
        s *= factor


def model(size, factor, lat_us, bw_GBps, wobble):
    t = lat_us + size * factor / (bw_GBps * 1e3)
    return t * wobble


def rank_lines(n, per_node, hosts, device, new=True):
    out = []
    for r in range(n):
        host = hosts[r // per_node]
        dev = r % per_node
        if new:
            out.append(f"#  Rank {r:2d} Group  0 Pid {41000 + r:6d} on {host:>10s} device {dev:2d} "
                       f"[0000:{0x07 + 16 * dev:02x}:00] {device}")
        else:
            out.append(f"#   Rank {r:2d} Pid {41000 + r:6d} on {host:>10s} device {dev:2d} "
                       f"[0x{0x07 + 16 * dev:02x}] {device}")
    return out


def new_format(name, n, per_node, hosts, device, type_name, redop, per_rank_count, factor,
               lat_us, bw_GBps, lo, hi, wrong="0", truncate_at=None, noise=()):
    lines = list(noise)
    lines += [
        "# nccl-tests version 2.13.9 nccl-headers=21903 nccl-library=21903",
        f"# Collective test starting: {name}",
        f"# nThread 1 nGpus 1 minBytes {lo} maxBytes {hi} step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0",
        "#",
        "# Using devices",
    ]
    lines += rank_lines(n, per_node, hosts, device)
    lines += [
        "#",
        "#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]
    ts = {"float": 4, "half": 2, "bfloat16": 2}[type_name]
    bws = []
    for i, s in enumerate(sizes(lo, hi)):
        count = s // ts // (n if per_rank_count else 1)
        row = f"{s:12d}  {count:12d}  {type_name:>8s}  {redop:>6s}  {-1:6d}"
        for place, wob in (("out", 1.0 + 0.013 * ((i * 7) % 5)), ("in", 1.0 + 0.011 * ((i * 3) % 4))):
            t = model(s, factor, lat_us, bw_GBps, wob)
            alg = s / (t * 1e3)
            row += f"  {fnum(t, 7)}  {fnum(alg, 6)}  {fnum(alg * factor, 6)}  {wrong:>6s}"
            bws.append(alg * factor)
        lines.append(row)
    if truncate_at is None:
        lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {sum(bws) / len(bws):g} ", "#",
                  f"# Collective test concluded: {name}", "#", ""]
        return "\n".join(lines)
    text = "\n".join(lines)
    return text[:truncate_at]


def old_format(n, per_node, hosts, device, header_cols, redop, per_rank_count, factor, lat_us, bw_GBps,
               lo, hi, noise=()):
    lines = list(noise)
    lines += [
        f"# nThread 1 nGpus 1 minBytes {lo} maxBytes {hi} step: 2(factor) warmup iters: 5 iters: 20 "
        "validation: 1 ",
        "#",
        "# Using devices",
    ]
    lines += rank_lines(n, per_node, hosts, device, new=False)
    has_redop = "redop" in header_cols
    pad = "       " if has_redop else ""
    lines += [
        "#",
        f"#                                        {pad}     out-of-place                       in-place          ",
        "#       size         count    type " + ("  redop " if has_redop else "") +
        "    time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)         " + ("        " if has_redop else "") +
        "    (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
    ]
    bws = []
    for i, s in enumerate(sizes(lo, hi)):
        count = s // 4 // (n if per_rank_count else 1)
        row = f"{s:12d}  {count:12d}  {'float':>6s}"
        if has_redop:
            row += f"  {redop:>6s}"
        for wob in (1.0 + 0.012 * ((i * 5) % 4), 1.0 + 0.009 * ((i * 3) % 5)):
            t = model(s, factor, lat_us, bw_GBps, wob)
            alg = s / (t * 1e3)
            row += f"  {old_time(t)}  {alg:6.2f}  {alg * factor:6.2f}  {0:5.0e}"
            bws.append(alg * factor)
        lines.append(row)
    lines += ["# Out of bounds values : 0 OK", f"# Avg bus bandwidth    : {sum(bws) / len(bws):g} ", "#", ""]
    return "\n".join(lines)


def main():
    h100 = "NVIDIA H100 80GB HBM3"
    a100 = "A100-SXM4-40GB"
    n8 = 8
    # New header, one node of 8 H100: all-reduce, F = 2(n-1)/n.
    open("all_reduce_h100_8gpu_new.txt", "w").write(new_format(
        "all_reduce_perf", n8, 8, ["dgx-h100-01"], h100, "bfloat16", "sum", False,
        2 * (n8 - 1) / n8, 18.0, 360.0, 8, 1 << 30))
    # New header, two nodes: all-gather on 16 ranks, F = (n-1)/n, no data check.
    n16 = 16
    open("all_gather_h100_2node_new.txt", "w").write(new_format(
        "all_gather_perf", n16, 8, ["gpu-node-a", "gpu-node-b"], h100, "float", "none", True,
        (n16 - 1) / n16, 45.0, 42.0, 1024, 1 << 30, wrong="N/A",
        noise=["[gpu-node-a:41000] Warning: Permanently added 'gpu-node-b' to the list of known hosts.",
               "gpu-node-a:41000:41000 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>"]))
    # Old header (no root, "error" column), reduce-scatter on 8 A100: shape says reduce_scatter.
    open("reduce_scatter_a100_8gpu_old.txt", "w").write(old_format(
        n8, 8, ["dgx-a100-3"], a100, ["redop"], "sum", True, (n8 - 1) / n8, 22.0, 230.0, 1024, 1 << 28))
    # Old all-gather header (no redop column), 2 nodes of 8 A100; echoed command names the binary.
    open("all_gather_a100_2node_old.txt", "w").write(old_format(
        n16, 8, ["node001", "node002"], a100, [], "", True, (n16 - 1) / n16, 60.0, 22.0, 4096, 1 << 28,
        noise=["$ mpirun -np 16 -N 8 --hostfile hosts ./build/all_gather_perf -b 4K -e 256M -f 2 -g 1",
               "--------------------------------------------------------------------------",
               "[node001:12345] 15 more processes have sent help message help-mpi-btl-base.txt",
               "--------------------------------------------------------------------------"]))
    # Truncated new-format all-reduce: the copy of the log stops inside a row.
    full = new_format("all_reduce_perf", n8, 8, ["dgx-h100-01"], h100, "bfloat16", "sum", False,
                      2 * (n8 - 1) / n8, 18.0, 360.0, 8, 1 << 30)
    cut = full.index("     4194304")
    open("all_reduce_truncated.txt", "w").write(full[:cut + 40])


if __name__ == "__main__":
    main()
