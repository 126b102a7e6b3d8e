#!/bin/sh
# Where the search ranks each published run's own plan (issue 8): for every
# job in data/published/runs/, `lostflops search JOB --rank-plan` searches
# every plan of the same model, GPUs and batch and places the published one.
# Prints one line per run (rank, gap to the best, the best plan, the walls that
# differ most) and how many published plans are in the top 10.
# Usage: scripts/published_ranks.sh [path/to/lostflops]
set -eu
exe=${1:-build/lostflops}
dir=$(dirname "$0")/../data/published/runs
top10=0
n=0
for job in "$dir"/*.json; do
    name=$(basename "$job" .json)
    out=$("$exe" search "$job" --rank-plan --top 1 2>/dev/null || true)
    line=$(printf '%s\n' "$out" | grep -A2 '^compare' | tr '\n' ' ' | sed 's/  */ /g')
    rank=$(printf '%s\n' "$line" | sed -n 's/^compare: rank \([0-9]*\).*/\1/p')
    n=$((n + 1))
    if [ -n "$rank" ] && [ "$rank" -le 10 ]; then top10=$((top10 + 1)); fi
    printf '%s: %s\n' "$name" "$line"
done
printf 'published plans in the top 10: %d of %d\n' "$top10" "$n"
