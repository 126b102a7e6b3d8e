#!/usr/bin/env python3
"""Host cost per kernel launch of a torch.compile'd training step, from a PyTorch profiler trace.

Sums, per step, the host time of the compiled forward ("Torch-Compiled Region: ...") and of
the compiled backward ("autograd::engine::evaluate_function: CompiledFunctionBackward"),
counts the host events recorded inside them (CPU operators, CUDA runtime and driver calls)
and the launches among them (cuLaunchKernel, cuLaunchKernelEx, cudaLaunchKernel,
cudaMemsetAsync, cudaMemcpyAsync), and prints the regions' time less the profiler's own
cost per recorded event (calibration profiler_event_us, 1.44 us; --profiler-event-us) over
the launches: the unprofiled host time per launch. Meaningful on a host-bound step only:
where the GPU is the slower, the host also waits inside the regions (a full launch queue).
Usage: scripts/compiled_launch_cost.py TRACE.json.gz [--profiler-event-us US]
(Python 3 standard library only)
"""
import collections
import gzip
import json
import sys

LAUNCHES = {"cuLaunchKernel", "cuLaunchKernelEx", "cudaLaunchKernel", "cudaMemsetAsync", "cudaMemcpyAsync"}


def is_region(e):
    name = e.get("name", "")
    return name.startswith("Torch-Compiled Region") or \
        name == "autograd::engine::evaluate_function: CompiledFunctionBackward"


def main():
    args = sys.argv[1:]
    per_event_us = 1.44
    if "--profiler-event-us" in args:
        i = args.index("--profiler-event-us")
        per_event_us = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    with gzip.open(args[0], "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep")}
    n = max(1, len(steps))
    host = [e for e in events if "dur" in e and e.get("cat") in
            ("cpu_op", "cuda_runtime", "cuda_driver", "python_function", "user_annotation")]
    by_tid = collections.defaultdict(list)
    for e in host:
        by_tid[e["tid"]].append(e)
    region_us = recorded = launches = 0
    for r in (e for e in host if is_region(e)):
        region_us += r["dur"]
        for e in by_tid[r["tid"]]:
            if e is not r and r["ts"] <= e["ts"] <= r["ts"] + r["dur"]:
                recorded += 1
                launches += e["name"] in LAUNCHES
    if launches == 0:
        sys.exit("no launch inside a compiled region: not a torch.compile trace")
    print(f"per step: compiled regions {region_us / n / 1e3:.2f} ms, {recorded / n:.0f} host events, "
          f"{launches / n:.0f} launches")
    print(f"host per launch, the profiler's {per_event_us} us per event out: "
          f"{(region_us - recorded * per_event_us) / launches:.2f} us")


if __name__ == "__main__":
    main()
