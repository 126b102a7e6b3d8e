# The flags of every case; the paths are the template's to fill in.
DATA=<path to the preprocessed data>
VOCAB=<path to gpt2-vocab.json>
MERGES=<path to gpt2-merges.txt>

export MEGATRON_ARGS="$EXTRA \
    --tensor-model-parallel-size $TP --pipeline-model-parallel-size $PP \
    --num-layers $LAYERS --hidden-size $HIDDEN --num-attention-heads $HEADS \
    --micro-batch-size $MBS --global-batch-size $GBS \
    --seq-length 2048 --max-position-embeddings 2048 --DDP-impl $DDP \
    --data-path $DATA --vocab-file $VOCAB --merge-file $MERGES \
    --train-iters 100 --lr 1.0e-4 --fp16"
