#!/usr/bin/env python3
"""MaxText's published MFU rows -> data/published/maxtext/ (published-runs.csv
and runs/NAME.yaml), each job made by `lostflops import maxtext` from the
fixture in tests/data/interop/maxtext/ that cites its config.

tokens/s per chip = published TFLOP/s per chip / MaxText's training FLOPs per
token (MaxText/maxtext_utils.py calculate_tflops_training_per_device @04fa3732c,
2024: 6 x parameters + 12 x heads x layers x head_dim x seq / 2, attention
halved for the causal mask; parameters counted as MaxText's parameter tree:
embedding and output V x E each (logits_via_embedding false), per layer
q/k/v/o, three MLP matrices and two norms, a final norm). Where only MFU is
published, TFLOP/s per chip = MFU x the chip's bf16 peak (catalog).

Usage: scripts/make_maxtext_table.py [build/lostflops]
"""
import os
import subprocess
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "lostflops")
OUT = os.path.join(ROOT, "data", "published", "maxtext")
README_2024 = "AI-Hypercomputer/maxtext README.md @04fa3732c (2024-03-15), Runtime Performance Results"
PEAK = {"v4": 275.0, "v5e": 197.0, "v5p": 459.0}

# name, fixture, --tpu, slices, published TFLOP/s per chip (None: from MFU), MFU %, source
ROWS = [
    ("maxtext2403-v4-22b-1x-v4-128", "v4-22b.yml", "v4-128", 1, 156, 56.7, README_2024 + ", TPU v4 22B table (configs/v4/22b.sh)"),
    ("maxtext2403-v4-22b-2x-v4-128", "v4-22b.yml", "v4-128", 2, 152, 55.2, README_2024 + ", TPU v4 22B table (configs/v4/22b.sh)"),
    ("maxtext2403-v5e-16b-1x-v5e-256", "v5e-16b.yml", "v5e-256", 1, 120, 61.10, README_2024 + ", TPU v5e table (configs/v5e/16b.sh)"),
    ("maxtext2403-v5e-32b-1x-v5e-256", "v5e-32b.yml", "v5e-256", 1, 132, 66.86, README_2024 + ", TPU v5e table (configs/v5e/32b.sh)"),
    ("maxtext2403-v5e-64b-1x-v5e-256", "v5e-64b.yml", "v5e-256", 1, 118, 59.90, README_2024 + ", TPU v5e table (configs/v5e/64b.sh)"),
    ("maxtext2403-v5e-128b-1x-v5e-256", "v5e-128b.yml", "v5e-256", 1, 110, 56.06, README_2024 + ", TPU v5e table (configs/v5e/128b.sh)"),
    ("maxtext2403-v5e-16b-2x-v5e-256", "v5e-16b.yml", "v5e-256", 2, 117, 59.37, README_2024 + ", TPU v5e table (configs/v5e/16b.sh)"),
    ("maxtext2403-v5e-32b-2x-v5e-256", "v5e-32b.yml", "v5e-256", 2, 128, 64.81, README_2024 + ", TPU v5e table (configs/v5e/32b.sh)"),
    ("maxtext2403-v5e-64b-2x-v5e-256", "v5e-64b.yml", "v5e-256", 2, 112, 56.66, README_2024 + ", TPU v5e table (configs/v5e/64b.sh)"),
    ("maxtext2403-v5e-128b-2x-v5e-256", "v5e-128b.yml", "v5e-256", 2, 110, 55.82, README_2024 + ", TPU v5e table (configs/v5e/128b.sh)"),
    ("maxtext-llama2-70b-v5p-128", "llama2-70b-v5p-128.yml", "v5p-128", 1, None, 65.0,
     "AI-Hypercomputer/maxtext tests/end_to_end/tpu/llama2/run_llama2.md @e591f30 (Llama2-70b MFU table, v5p-128 bf16); "
     "plan from benchmarks/maxtext_v5p_model_configs.py llama2_70b_v5p_128"),
]


def params(m):
    e, v = m["hidden_size"], m["vocab_size"]
    h, kv, d = m["num_attention_heads"], m["num_key_value_heads"], m["head_dim"]
    f, layers = m["intermediate_size"], m["num_hidden_layers"]
    per_layer = e * h * d + 2 * e * kv * d + h * d * e + 3 * e * f + 2 * e
    return 2 * v * e + layers * per_layer + e


def main():
    os.makedirs(os.path.join(OUT, "runs"), exist_ok=True)
    lines = ["name,source,num_gpus,gpu,published,tokens_per_s_per_gpu,derivation"]
    for name, fixture, tpu, slices, tflops, mfu, source in ROWS:
        path = os.path.join(ROOT, "tests", "data", "interop", "maxtext", fixture)
        job = subprocess.run([EXE, "import", "maxtext", path, "--tpu", tpu, "--slices", str(slices)],
                             check=True, capture_output=True, text=True).stdout
        job = job.replace(path, "tests/data/interop/maxtext/" + fixture)
        with open(os.path.join(OUT, "runs", name + ".yaml"), "w") as f:
            f.write(job)
        j = yaml.safe_load(job)
        m, t, c = j["model"], j["training"], j["cluster"]
        n = params(m)
        flops_token = 6 * n + 6 * m["num_attention_heads"] * m["num_hidden_layers"] * m["head_dim"] * t["seq_length"]
        kind = tpu.split("-")[0]
        if tflops is None:
            tflops = mfu / 100 * PEAK[kind]
            published = f"{mfu:g} % MFU"
            how = f"{mfu:g} % x {PEAK[kind]:g} TFLOP/s bf16 peak = {tflops:.2f} TFLOP/s per chip"
        else:
            published = f"{tflops:g} TFLOP/s per chip ({mfu:g} % MFU)"
            how = f"{tflops:g} TFLOP/s per chip as published"
        tokens = tflops * 1e12 / flops_token
        derivation = (f"{how} / MaxText 2024 training FLOPs per token 6 x {n / 1e9:.3f} B params + causal attention "
                      f"= {flops_token / 1e9:.2f} GFLOP; {slices} slice(s) of {tpu}; job by `lostflops import maxtext "
                      f"tests/data/interop/maxtext/{fixture} --tpu {tpu} --slices {slices}`")
        lines.append(f'{name},"{source}",{c["num_gpus"]},{c["gpu"]},{published},{tokens:.2f},"{derivation}"')
    with open(os.path.join(OUT, "published-runs.csv"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
