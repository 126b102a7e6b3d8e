#!/bin/bash
#SBATCH --ntasks-per-node=8 --exclusive
#SBATCH -t 0:30:00

LOGS=$(pwd)/logs
mkdir -p "$LOGS"
srun -l --output="$LOGS/%j.log" bash -c "python -u pretrain_gpt.py $MEGATRON_ARGS"
