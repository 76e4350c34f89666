#!/bin/bash
# bench/ab-compare.sh — two gimpi sides measured in alternation, cell by cell: two builds
# (before and after a change), or one build's native and PVM APIs.  A side is
# BUILD_DIR[:native|:pvm]; its command is BUILD_DIR/bench/gimpi-bench --api API.  For
# every figure and N, R repetitions of A then B; prints per cell the medians over the
# repetitions and the ratio B / A for times, A / B for rates (so > 1 always means B is
# slower), and keeps the raw lines.  rtt8 and stream1m run at N = 2 only.
#   bench/ab-compare.sh SIDE_A SIDE_B [REPS] [FIGURES] [NS]
#   e.g. bench/ab-compare.sh ../before/_build _build 7
#        bench/ab-compare.sh _build:native _build:pvm 5 "barrier bcast8" "2 4 8"
set -u
[ $# -ge 2 ] || { sed -n '2,9p' "$0" >&2; exit 2; }
REPS=${3:-5}
FIGS=${4:-rtt8 stream1m barrier bcast8 bcast1m reduce1int reduce1mdbl}
NS=${5:-2 4 8}
# side SPEC: sets cmd (the command) and label from BUILD_DIR[:API]
side() {
    local build=${1%%:*} api=native
    [ "$build" = "$1" ] || api=${1#*:}
    build=$(cd "$build" && pwd) || exit 1
    [ -x "$build/bench/gimpi-bench" ] || { echo "ab-compare: $build/bench/gimpi-bench missing (make first)" >&2; exit 1; }
    cmd="$build/bench/gimpi-bench --api $api"
}
side "$1"; A=$cmd
side "$2"; B=$cmd
raw=$(mktemp "${TMPDIR:-/tmp}/ab-compare.XXXXXX")
echo "# A: $A" | tee -a "$raw" >&2
echo "# B: $B" | tee -a "$raw" >&2
for fig in $FIGS; do for n in $NS; do
    case $fig in rtt8 | stream1m) [ "$n" = 2 ] || continue ;; esac
    for r in $(seq "$REPS"); do
        for s in A B; do
            eval "c=\$$s"
            line=$(timeout 600 $c "$fig" "$n" 2>"$raw.err" | grep -E "^gimpi(-pvm)? $fig n=$n ")
            echo "$s ${line:-FAILED $fig n=$n} rep=$r" | tee -a "$raw" >&2
            [ -n "$line" ] || sed 's/^/# /' "$raw.err" | tee -a "$raw" >&2     # why it failed
            rm -f "$raw.err"
        done
    done
done; done
echo "raw: $raw"
python3 - "$raw" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list); order = []; rate = {}
for l in open(sys.argv[1]):
    t = l.split()
    if len(t) < 5 or t[0] not in ("A", "B") or t[1] == "FAILED":
        continue
    key = (t[2], int(t[3][2:]))
    if key not in order:
        order.append(key)
    metric, value = t[4].split("=")
    rate[key] = not metric.endswith("_us")
    d[key + (t[0],)].append(float(value))
print(f"{'figure':12} {'n':>2} {'A':>10} {'B':>10} {'B vs A':>7}  reps   (> 1: B slower)")
for key in order:
    a, b = d[key + ("A",)], d[key + ("B",)]
    ma = statistics.median(a) if a else float("nan")
    mb = statistics.median(b) if b else float("nan")
    r = (ma / mb if rate[key] else mb / ma) if a and b else float("nan")
    print(f"{key[0]:12} {key[1]:>2} {ma:>10.2f} {mb:>10.2f} {r:>7.3f}  {len(a)}/{len(b)}")
PY
