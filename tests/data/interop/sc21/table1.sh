#!/bin/bash
# A launch written for lostflops' tests in the style of Megatron-LM's
# examples/academic_paper_scripts/sc21 (not copied from it): one case per row
# of Narayanan et al. 2021 (SC21), Table 1, chosen by MODEL_SIZE; the flags are
# put together in config.sh and the batch script srun.sh is submitted by sbatch.
MODEL_SIZE=${MODEL_SIZE:-1.7B}

# layers hidden heads tp pp micro-batch global-batch nodes [layers per virtual stage]
case $MODEL_SIZE in
    1.7B) ROW=(24 2304 24 1 1 16 512 4) ;;
    3.6B) ROW=(30 3072 32 2 1 16 512 8) ;;
    7.5B) ROW=(36 4096 32 4 1 16 512 16) ;;
    18B)  ROW=(40 6144 48 8 1 8 1024 32) ;;
    39B)  ROW=(48 8192 64 8 2 4 1536 64) ;;
    76B)  ROW=(60 10240 80 8 4 2 1792 128 5) ;;
    145B) ROW=(80 12288 96 8 8 2 2304 192 5) ;;
    310B) ROW=(96 16384 128 8 16 1 2160 240 3) ;;
    530B) ROW=(105 20480 128 8 35 1 2520 315 1) ;;
    1T)   ROW=(128 25600 160 8 64 1 3072 384) ;;
    *)
        echo "unknown size: $MODEL_SIZE" >&2
        exit 1
        ;;
esac
LAYERS=${ROW[0]} HIDDEN=${ROW[1]} HEADS=${ROW[2]}
TP=${ROW[3]}
PP=${ROW[4]}
MBS=${ROW[5]}
GBS=${ROW[6]}
NODES=${ROW[7]}

# Full recompute, named as in 2021; the interleaved schedule where the row says.
EXTRA="--activations-checkpoint-method uniform"
if [ ${#ROW[@]} -gt 8 ]; then
    EXTRA+=" --num-layers-per-virtual-pipeline-stage ${ROW[8]}"
fi
if (( TP * PP > 8 )); then DDP=local; else DDP=torch; fi

export JOB_NAME=table1_${MODEL_SIZE}
source "$(dirname "${BASH_SOURCE[0]}")/config.sh"
sbatch --job-name="$JOB_NAME" --nodes=$NODES --export=ALL srun.sh
