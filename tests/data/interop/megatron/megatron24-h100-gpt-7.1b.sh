# Megatron-LM README 2024 (Megatron-Core r0.8.0 weak scaling table): GPT 7.1b on 96 H100
# Megatron-Core r0.8.0 flags; vocabulary 131,072 as in the table; mock data.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nnodes 12 --nproc-per-node 8 pretrain_gpt.py \
    --use-mcore-models \
    --transformer-impl transformer_engine \
    --tensor-model-parallel-size 2 \
    --pipeline-model-parallel-size 1 \
    --sequence-parallel \
    --num-layers 30 \
    --hidden-size 4096 \
    --ffn-hidden-size 16384 \
    --num-attention-heads 32 \
    --seq-length 4096 \
    --max-position-embeddings 4096 \
    --position-embedding-type rope \
    --vocab-size 131072 \
    --mock-data \
    --micro-batch-size 1 \
    --global-batch-size 192 \
    --bf16 \
    --use-distributed-optimizer \
    --overlap-grad-reduce \
    --overlap-param-gather \
    --tp-comm-overlap \
    --lr 1.0e-4 \
    --lr-decay-style cosine \
    --weight-decay 0.1 \
    --clip-grad 1.0 \
    --log-interval 1 \
    --log-throughput \
    --eval-iters 0 \
    --manual-gc
