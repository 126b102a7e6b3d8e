# Megatron-LM README 2024 (Megatron-Core r0.8.0 weak scaling table): GPT 32b on 384 H100
# Megatron-Core r0.8.0 flags; vocabulary 131,072 as in the table; mock data.
export CUDA_DEVICE_MAX_CONNECTIONS=1
torchrun --nnodes 48 --nproc-per-node 8 pretrain_gpt.py \
    --use-mcore-models \
    --transformer-impl transformer_engine \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 1 \
    --sequence-parallel \
    --num-layers 48 \
    --hidden-size 7168 \
    --ffn-hidden-size 28672 \
    --num-attention-heads 56 \
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
