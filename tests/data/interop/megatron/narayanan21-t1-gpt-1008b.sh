# Narayanan et al. 2021, SC21, Table 1: GPT 1008b on 3072 A100 80GB
# Launch as in Megatron-LM v2 (2021) examples/pretrain_gpt_distributed_with_mp.sh.
# Vocabulary: the paper's V = 51,200 (GPT-2 BPE padded for tp 8).
python -m torch.distributed.launch --nproc_per_node 8 --nnodes 384 --node_rank 0 --master_addr localhost --master_port 6000 pretrain_gpt.py \
    --tensor-model-parallel-size 8 \
    --pipeline-model-parallel-size 64 \
    --num-layers 128 \
    --hidden-size 25600 \
    --num-attention-heads 160 \
    --micro-batch-size 1 \
    --global-batch-size 3072 \
    --seq-length 2048 \
    --max-position-embeddings 2048 \
    --lr-decay-iters 320000 \
    --save /checkpoints/gpt \
    --load /checkpoints/gpt \
    --data-path /data/my-gpt_text_document \
    --tokenizer-type GPT2BPETokenizer \
    --vocab-file gpt2-vocab.json \
    --merge-file gpt2-merges.txt \
    --data-impl mmap \
    --split 949,50,1 \
    --distributed-backend nccl \
    --lr 0.00015 \
    --lr-decay-style cosine \
    --min-lr 1.0e-5 \
    --weight-decay 1e-2 \
    --clip-grad 1.0 \
    --lr-warmup-fraction .01 \
    --checkpoint-activations \
    --checkpoint-num-layers 1 \
    --log-interval 100 \
    --save-interval 10000 \
    --eval-interval 1000 \
    --eval-iters 10 \
    --fp16 \
    --DDP-impl local
