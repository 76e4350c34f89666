#!/bin/bash
# t/pvm_bench.sh — the PVM-API benchmark mode runs and prints well-formed lines (no timing
# is asserted): `gimpi-bench --api pvm FIGURE N` and `gimpi-pvm-bench FIGURE N` for every
# figure they measure print exactly one line "gimpi-pvm FIGURE n=N median_us=<number> ..."
# (MBps for stream1m) with check=ok where the figure checks; `--api native` is the plain
# native run; bad arguments are refused with usage (exit 2).  Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
BENCH="$top_builddir/bench/gimpi-bench"
PBENCH="$top_builddir/bench/gimpi-pvm-bench"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..11"
num='[0-9]+(\.[0-9]+)?'
# line CMD FIGURE N METRIC CHECK: runs CMD FIGURE N, checks its single well-formed line
line() {
    local cmd=$1 fig=$2 nn=$3 metric=$4 check=$5 sys=gimpi-pvm
    [ "$cmd" = native ] && sys=gimpi
    local -a run=("$BENCH" --api "$cmd")
    [ "$cmd" = direct ] && { run=("$PBENCH"); sys=gimpi-pvm; }
    timeout 240 "${run[@]}" "$fig" "$nn" >"$tmp/out" 2>"$tmp/err"
    local rc=$? got
    got=$(grep -cE "^$sys $fig n=$nn $metric=$num( [A-Za-z0-9_]+=[^ ]+)*$" "$tmp/out")
    if [ $rc = 0 ] && [ "$got" = 1 ] && [ "$(wc -l <"$tmp/out")" = 1 ] &&
       { [ "$check" = 0 ] || grep -q " check=ok" "$tmp/out"; }; then
        ok 0 "$cmd $fig $nn: $(cut -d' ' -f1-4 "$tmp/out")"
    else
        ok 1 "$cmd $fig $nn (exit $rc)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
    fi
}
line pvm barrier 3 median_us 0
line pvm bcast8 3 median_us 1
line pvm bcast1m 2 median_us 1
line pvm reduce1int 3 median_us 1
line pvm reduce1mdbl 2 median_us 1
line pvm rtt8 2 median_us 1
line direct stream1m 2 MBps 1
line native reduce1int 2 median_us 1
timeout 30 "$PBENCH" rtt8 3 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "N must be" "$tmp/err"; ok $? "rtt8 with N = 3 refused (exit $rc)"
timeout 30 "$BENCH" --api pvm nosuch 2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "usage" "$tmp/err"; ok $? "an unknown figure is refused with usage (exit $rc)"
timeout 30 "$BENCH" --api fortran barrier 2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q "usage" "$tmp/err"; ok $? "an unknown --api is refused with usage (exit $rc)"
exit $((failed > 0))
