# Korthikanti et al. 2022, Table 5 (configs Table 3): mtnlg-530b-full on 280 A100 80GB
# Megatron-LM v3.0 (2022) flags; full recompute, no sequence parallelism.
# --data-impl as in the 2022 examples/pretrain_gpt_distributed_with_mp.sh (removed in 2023, before Megatron-Core).
torchrun --nproc_per_node=8 --nnodes=35 pretrain_gpt.py \
    --tensor-model-parallel-size=8 \
    --pipeline-model-parallel-size=35 \
    --num-layers-per-virtual-pipeline-stage=1 \
    --num-layers=105 \
    --hidden-size=20480 \
    --num-attention-heads=128 \
    --micro-batch-size=1 \
    --global-batch-size=280 \
    --seq-length=2048 \
    --max-position-embeddings=2048 \
    --tokenizer-type=GPT2BPETokenizer \
    --vocab-file=gpt2-vocab.json \
    --merge-file=gpt2-merges.txt \
    --data-path=/data/my-gpt_text_document \
    --data-impl=mmap \
    --split=949,50,1 \
    --lr=6.0e-5 \
    --min-lr=6.0e-6 \
    --lr-decay-style=cosine \
    --weight-decay=0.1 \
    --adam-beta1=0.9 \
    --adam-beta2=0.95 \
    --init-method-std=0.006 \
    --clip-grad=1.0 \
    --bf16 \
    --log-interval=1 \
    --eval-iters=0 \
    --recompute-granularity=full \
    --recompute-method=uniform
