#!/bin/bash
# bench/api-compare.sh — the group figures through the native API (gimpi-bench FIGURE N,
# system gimpi) and through the PVM API (gimpi-bench --api pvm FIGURE N, system gimpi-pvm)
# side by side: for every figure and N, R repetitions of native then PVM, alternating
# (the comparison harness of bench/README.md runs one project command only); prints per cell the medians over
# the repetitions and the ratio gimpi-pvm / gimpi (< 1: the PVM API is faster), and keeps
# the raw lines.
#   bench/api-compare.sh [BUILD_DIR] [REPS] [FIGURES] [NS]
#   e.g. bench/api-compare.sh _build 5 "barrier bcast8 bcast1m reduce1int reduce1mdbl" "2 4 8"
set -u
SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=$(cd "${1:-$SRC/_build}" && pwd)
REPS=${2:-5}
FIGS=${3:-barrier bcast8 bcast1m reduce1int reduce1mdbl}
NS=${4:-2 4 8}
BENCH="$BUILD/bench/gimpi-bench"
[ -x "$BENCH" ] || { echo "api-compare: $BENCH missing (make first)" >&2; exit 1; }
raw=$(mktemp "${TMPDIR:-/tmp}/api-compare.XXXXXX")
for fig in $FIGS; do for n in $NS; do for r in $(seq "$REPS"); do
    for api in native pvm; do
        line=$(timeout 600 "$BENCH" --api $api "$fig" "$n" 2>"$raw.err" | grep -E "^gimpi(-pvm)? $fig n=$n ")
        echo "${line:-FAILED $api $fig n=$n} rep=$r" | tee -a "$raw" >&2
        [ -n "$line" ] || sed 's/^/# /' "$raw.err" | tee -a "$raw" >&2     # why it failed
        rm -f "$raw.err"
    done
done; done; done
echo "raw: $raw"
python3 - "$raw" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list); order = []
for l in open(sys.argv[1]):
    t = l.split()
    if len(t) < 4 or t[0] not in ("gimpi", "gimpi-pvm"):
        continue
    key = (t[1], int(t[2][2:]))
    if key not in order:
        order.append(key)
    d[key + (t[0],)].append(float(t[3].split("=")[1]))
print(f"{'figure':12} {'n':>2} {'gimpi (native)':>15} {'gimpi-pvm':>10} {'pvm/native':>10}  reps")
for fig, n in order:
    a, b = d[(fig, n, "gimpi")], d[(fig, n, "gimpi-pvm")]
    ma = statistics.median(a) if a else None
    mb = statistics.median(b) if b else None
    r = f"{mb / ma:.3f}" if ma and mb else "-"
    print(f"{fig:12} {n:>2} {ma if ma is not None else float('nan'):>15.2f} "
          f"{mb if mb is not None else float('nan'):>10.2f} {r:>10}  {len(a)}/{len(b)}")
PY
