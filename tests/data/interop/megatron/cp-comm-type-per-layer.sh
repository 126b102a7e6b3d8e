#!/bin/bash
# Seed for fuzz_megatron: context parallelism with --cp-comm-type (one value
# per layer, nargs '+') and query/key norms (written for lostflops).
CP_TYPES=(a2a a2a p2p allgather)
torchrun --nproc_per_node 8 --nnodes 2 pretrain_gpt.py \
    --num-layers 4 --hidden-size 2048 --num-attention-heads 16 \
    --group-query-attention --num-query-groups 8 --qk-layernorm \
    --seq-length 32768 --micro-batch-size 1 --global-batch-size 16 \
    --vocab-size 32000 --bf16 --tensor-model-parallel-size 2 \
    --context-parallel-size 4 --cp-comm-type ${CP_TYPES[@]}
