#!/bin/bash
# How many of Megatron-LM's training launch scripts (examples/) import and
# estimate as written (issue 23). Each script is imported from its own folder
# with `lostflops import megatron --num-gpus 8`, then estimated on a DGX H100
# cluster; where the script's own plan needs more GPUs than it launches
# (tp x pp x cp x ep over 8), at that many. Exit 1 (does not fit) counts as
# estimated. Mode `plain` gives nothing else; mode `usage` also gives what the
# script's usage line or its exit message asks for (its positional arguments,
# the variables it refuses to start without), listed below beside each script.
# Training launch scripts: those that start a Megatron training entry point;
# helpers they call (sc21 SBATCH.sh/SRUN.sh/CONFIG.sh, post_training conf/),
# inference, conversion and data scripts are not counted.
# Writes only to a temporary folder.
# Usage: scripts/megatron_examples.sh MEGATRON_GIT_DIR [COMMIT] [plain|usage] [path/to/lostflops]
set -u
repo=${1:?a Megatron-LM git directory (a mirror or a clone)}
commit=${2:-HEAD}
mode=${3:-usage}
exe=$(realpath "${4:-build/lostflops}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git --git-dir="$repo" --work-tree="$tmp" archive "$commit" examples | tar -x -C "$tmp" || exit 2
printf 'Megatron-LM %s, mode %s\n' "$(git --git-dir="$repo" rev-parse "$commit")" "$mode"

scripts='
academic_paper_scripts/detxoify_lm/finetune_gpt_distributed-1.3b.sh|--arg /data --arg run1 --arg 2e-5 --arg 512 --arg 1000 --arg /ckpt
academic_paper_scripts/sc21/run_figure_11.sh|
academic_paper_scripts/sc21/run_figure_12.sh|
academic_paper_scripts/sc21/run_figure_13.sh|
academic_paper_scripts/sc21/run_figure_14.sh|
academic_paper_scripts/sc21/run_figure_15.sh|
academic_paper_scripts/sc21/run_figure_16.sh|
academic_paper_scripts/sc21/run_figure_17.sh|
academic_paper_scripts/sc21/run_figure_18.sh|
academic_paper_scripts/sc21/run_table_1.sh|
bert/train_bert_340m_distributed.sh|
gpt3/train_gpt3_175b_distributed.sh|
gptoss/02_train.sh|
llama/train_llama3_8b_h100_fp8.sh|
mamba/train.sh|--arg /data --arg /tokenizer.model
megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh|
megatron_fsdp/train_llama3_8b_fsdp_h100_fp8.sh|
mimo/scripts/run_avlm_train.sh|
mimo/scripts/run_hetero_nemotron_20l_mock_train.sh|
mimo/scripts/run_mock_train.sh|
mimo/scripts/run_video_vlm_train.sh|
mimo/scripts/run_vlm_train.sh|
mixtral/train_mixtral_8x7b_distributed.sh|
multimodal/llama_3p1_nemotron_nano_vl_8b_v1/pretraining_llama_3p1_nemotron_nano_vl_8b_v1.sh|
multimodal/llama_3p1_nemotron_nano_vl_8b_v1/sft_llama_3p1_nemotron_nano_vl_8b_v1.sh|
multimodal/nvlm/pretrain_qwen20_72b_internvit_6b.sh|
multimodal/nvlm/pretrain_yi_34b_internvit_6b.sh|
multimodal/nvlm/sft_34b_internvit.sh|
multimodal/nvlm/sft_qwen20_72b_internvit_6b.sh|
multimodal/nvlm/sft_qwen2p5_7b_internvit_6b_video.sh|
multimodal/pretrain_mistral_clip.sh|--env WORKSPACE=/ws --env LOAD_NAME=mistral_clip
multimodal/sft_mistral_clip.sh|--env WORKSPACE=/ws --env LOAD_NAME=mistral_clip --env LOAD_ITER=1000
post_training/modelopt/eagle3.sh|--arg meta-llama/Llama-3.1-8B-Instruct
post_training/modelopt/finetune.sh|--arg meta-llama/Llama-3.1-8B-Instruct
post_training/modelopt/train.sh|--arg meta-llama/Llama-3.1-8B-Instruct
t5/train_t5_220m_distributed.sh|
'
ok=0
n=0
while IFS='|' read -r script given; do
    [ -n "$script" ] || continue
    [ "$mode" = usage ] || given=""
    n=$((n + 1))
    out="$tmp/out.$n"
    # $given holds words without spaces or quotes (the list above): split as words.
    # shellcheck disable=SC2086
    if ! (cd "$tmp/examples/$(dirname "$script")" &&
          "$exe" import megatron --num-gpus 8 $given "$(basename "$script")" >"$out.yaml" 2>"$out.err"); then
        printf 'FAIL import   %s: %s\n' "$script" "$(grep 'error' "$out.err" | tail -1)"
        continue
    fi
    "$exe" estimate "$out.yaml" --set cluster.preset=dgx-h100 >/dev/null 2>"$out.eerr"
    rc=$?
    at=""
    if [ "$rc" -gt 1 ]; then
        gpus=$(awk '/^  (tp|pp|cp|ep):/ { p = (p ? p : 1) * $2 } END { print p }' "$out.yaml")
        "$exe" estimate "$out.yaml" --set cluster.preset=dgx-h100 --set cluster.num_gpus="$gpus" >/dev/null 2>"$out.eerr"
        rc=$?
        at=" (at the $gpus GPUs of its plan)"
    fi
    if [ "$rc" -gt 1 ]; then
        printf 'FAIL estimate %s: %s\n' "$script" "$(tail -1 "$out.eerr")"
        continue
    fi
    ok=$((ok + 1))
    printf 'ok   (exit %d) %s%s\n' "$rc" "$script" "$at"
done <<EOF
$scripts
EOF
printf 'imported and estimated: %d of %d\n' "$ok" "$n"
