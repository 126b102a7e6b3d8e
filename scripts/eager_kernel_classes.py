#!/usr/bin/env python3
"""Achieved bandwidth of the eager stack's memory-bound kernel classes in a PyTorch profiler trace.

Prints, per class, kernels, time and bytes per step and the bandwidth (bytes read +
written over kernel time), with the element count of each kernel read off its launch
grid (PyTorch 2.11 aten/src/ATen/native/cuda/Loops.cuh and CUDALoops.cuh: 128 threads
a block; unrolled_elementwise_kernel 4 elements a thread, elementwise_kernel<128, vt>
vt, vectorized_elementwise_kernel<vec> vec):
  upcast     unrolled_elementwise_kernel<direct_copy...LoadWithCast>: bf16 -> fp32 copy
             (ToCopyBackward0 of autocast's casts, logits.float()), 6 bytes an element
  vector     vectorized_elementwise_kernel<4, ... bfloat16_copy | CUDAFunctor_add<float>>:
             fp32 -> bf16 cast (6) and contiguous fp32 add (12), the streaming reference
  broadcast  elementwise_kernel<128, 2, gpu_kernel_impl_nocast<MulFunctor<float>>>:
             fp32 multiply with a broadcast operand (RMSNorm's x * rsqrt, weight * x
             and their backward), 8 bytes an element
  mixed      elementwise_kernel<128, 4, gpu_kernel_impl<MulFunctor<float>>> (bf16 q, k
             times fp32 cos, sin: read 2, write 4) and neg on rotate_half's strided
             halves (elementwise_kernel<128, 4, ...neg_kernel...>, bf16: 4)
and the GPU's gap between back-to-back kernels: the next kernel's start less the
previous one's end, on one stream, where the next was launched (its cudaLaunchKernel
returned) before the previous ended, so the host was not what the GPU waited for;
and the optimizer's launches a step: torch.optim's multi_tensor_apply kernels (fused
AdamW's, foreach AdamW's), with the GPU's idle before each (its start less the latest
end of any GPU operation before it, on any stream); estimate.cpp
hf_optimizer_launches prices the count.
Usage: scripts/eager_kernel_classes.py TRACE.json.gz   (Python 3 standard library only)
"""
import gzip
import json
import re
import sys


def classify(name, grid):
    if "direct_copy_kernel_cuda" in name and name.startswith("void at::native::unrolled_elementwise_kernel") \
            and "LoadWithCast" in name:
        return "upcast", grid * 4, 6
    if name.startswith("void at::native::vectorized_elementwise_kernel<8, at::native::bfloat16_copy_kernel_cuda"):
        return "vector", grid * 8, 6
    if name.startswith("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>"):
        return "vector", grid * 4, 12
    if name.startswith("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>"):
        return "broadcast", grid * 2, 8
    if name.startswith("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float>"):
        return "mixed", grid * 4, 6
    if name.startswith("void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::neg_kernel_cuda"):
        return "mixed", grid * 4, 4
    return None, 0, 0


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    with gzip.open(sys.argv[1], "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = {e["name"] for e in events if str(e.get("name", "")).startswith("ProfilerStep")}
    n = max(1, len(steps))
    acc = {}
    launched = {e["args"]["correlation"]: e["ts"] + e.get("dur", 0) for e in events
                if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    by_stream = {}
    for e in events:
        if e.get("cat") == "kernel":
            by_stream.setdefault(e["args"].get("stream"), []).append(e)
    gaps = []
    for ks in by_stream.values():
        ks.sort(key=lambda e: e["ts"])
        for prev, nxt in zip(ks, ks[1:]):
            end = prev["ts"] + prev["dur"]
            if launched.get(nxt["args"].get("correlation"), end) < end:
                gaps.append(max(0.0, nxt["ts"] - end))
    opt_gaps, end = [], None
    for e in sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")),
                    key=lambda e: e["ts"]):
        if end is not None and "multi_tensor_apply_kernel" in e["name"]:
            opt_gaps.append(max(0.0, e["ts"] - end))
        end = e["ts"] + e["dur"] if end is None else max(end, e["ts"] + e["dur"])
    for e in events:
        if e.get("cat") != "kernel":
            continue
        a = e.get("args", {})
        grid = a.get("grid", [0])[0] * a.get("block", [0])[0]
        cls, elems, per = classify(e["name"], grid)
        if cls is None or elems < 2**20:  # big kernels only: no launch ramp, no minimum duration
            continue
        k, t, b = acc.get(cls, (0, 0.0, 0.0))
        acc[cls] = (k + 1, t + e["dur"] * 1e-6, b + elems * per)
    print(f"{'class':10s} {'kernels':>8s} {'ms/step':>8s} {'GB/step':>8s} {'GB/s':>7s}")
    for cls in ("vector", "upcast", "broadcast", "mixed"):
        if cls in acc:
            k, t, b = acc[cls]
            print(f"{cls:10s} {k / n:8.1f} {t / n * 1e3:8.3f} {b / n / 1e9:8.3f} {b / t / 1e9:7.0f}")
    if gaps:
        gaps.sort()
        print(f"gap between queued kernels: {len(gaps)} gaps, mean {sum(gaps) / len(gaps):.2f} us, "
              f"median {gaps[len(gaps) // 2]:.2f} us")
    opt = [e["name"] for e in events if e.get("cat") == "kernel" and "multi_tensor_apply_kernel" in e["name"]]
    if opt:
        fused = sum(1 for x in opt if "Fused" in x)
        print(f"optimizer launches a step (multi_tensor_apply): {len(opt) / n:.1f} ({fused / n:.1f} fused AdamW, "
              f"{(len(opt) - fused) / n:.1f} foreach)" +
              (f"; the GPU idles {sum(opt_gaps) / n / 1e3:.3f} ms a step before them, "
               f"{sum(opt_gaps) / len(opt_gaps):.2f} us each" if opt_gaps else ""))


if __name__ == "__main__":
    main()
