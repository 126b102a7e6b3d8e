#!/bin/bash
# `trace merge` at cluster scale: N per-rank summaries (default 16,384, one
# file each, rank 12345 made 1.5x slower) merged with /usr/bin/time -v; prints
# the wall time, CPU time and peak RSS, checks that the slow rank is named,
# and exits 1 when the merge takes over LIMIT_S seconds (default 10) or
# LIMIT_MB MB (default 1024) of peak RSS. The summaries are copies of those of
# 8 ranks of `lostflops trace synth` (scripts/make_summaries.py).
# usage: bench/trace_merge_scale.sh [BUILD_DIR] [WORK_DIR] [N]
set -euo pipefail
build=${1:-build}
work=${2:-/tmp/lostflops-merge-scale}
n=${3:-16384}
limit_s=${LIMIT_S:-10}
limit_mb=${LIMIT_MB:-1024}
here=$(cd "$(dirname "$0")/.." && pwd)
lf="$build/lostflops"
rm -rf "$work"
mkdir -p "$work/traces" "$work/templates"
"$lf" trace synth "$work/traces" --ranks 16 --tp 8 --layers 2 2>/dev/null
for r in 0 1 2 3 4 5 6 7; do
  "$lf" trace "$work/traces/rank0000$r.json" --summary-out "$work/templates/$r.json" > /dev/null
done
python3 "$here/scripts/make_summaries.py" "$work/summaries" "$n" "$work"/templates/*.json --slow-rank 12345
echo "$n summaries, $(du -sm "$work/summaries" | cut -f1) MB"
/usr/bin/time -v "$lf" trace merge "$work/summaries" --format json > "$work/merged.json" 2> "$work/time.txt"
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$work/time.txt")
cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$work/time.txt")
rss_mb=$(awk -F': ' '/Maximum resident/ {print int($2 / 1024)}' "$work/time.txt")
echo "trace merge: wall ${wall} s, cpu ${cpu} s, peak RSS ${rss_mb} MB (load: $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$work/merged.json" "$n" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
ranks = [s["rank"] for s in m["cluster"]["slow_ranks"]]
print("ranks merged:", len(m["ranks"]), "| slow ranks named:", ranks)
if len(m["ranks"]) != n:
    sys.exit("not every rank was merged")
if n > 12345 and ranks != [12345]:
    sys.exit("the slow rank 12345 is not the one rank named")
PY
awk -v w="$wall" -v l="$limit_s" 'BEGIN {exit !(w <= l)}' || { echo "over ${limit_s} s" >&2; exit 1; }
[ "$rss_mb" -le "$limit_mb" ] || { echo "over ${limit_mb} MB" >&2; exit 1; }
