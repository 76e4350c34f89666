#!/bin/bash
# t/bench_lines.sh — the native benchmark `bench/gimpi-bench FIGURE N` prints the common
# line grammar of bench/README.md (no timing is asserted): one line "gimpi FIGURE
# n=N METRIC=<number> key=value ...", check=ok where the figure checks, the group
# figures with each member's own median (member_us=, one number per member) and the level
# they ran at (api=group with groupd, api=view with GIMPI_BENCH_VIEW=1 or when no groupd
# can be had, which stderr then says); an unknown figure is refused.  Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
BENCH="$top_builddir/bench/gimpi-bench"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..8"
num='[0-9]+(\.[0-9]+)?'
# line FIGURE N METRIC WANT...: runs gimpi-bench FIGURE N, checks its single line and
# that it matches every extended regex WANT
line() {
    local fig=$1 nn=$2 metric=$3
    shift 3
    timeout 240 "$BENCH" "$fig" "$nn" >"$tmp/out" 2>"$tmp/err"
    local rc=$? bad=0 re
    [ $rc = 0 ] && [ "$(wc -l <"$tmp/out")" = 1 ] &&
        grep -qE "^gimpi $fig n=$nn $metric=$num( [A-Za-z0-9_]+=[^ ]+)*$" "$tmp/out" || bad=1
    for re in "$@"; do grep -qE -- "$re" "$tmp/out" || bad=1; done
    if [ $bad = 0 ]; then ok 0 "$fig $nn: $(cut -d' ' -f1-4 "$tmp/out")"; else
        ok 1 "$fig $nn (exit $rc)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
line barrier 3 median_us " member_us=$num,$num,$num " " api=group"
line bcast8 2 median_us " member_us=$num,$num " " check=ok"
line reduce1int 4 median_us " member_us=$num(,$num){3} " " check=ok"
line rtt8 2 median_us " check=ok"
GIMPI_BENCH_VIEW=1 line bcast1m 2 median_us " api=view" " MBps=$num" " check=ok"
# no groupd can be found or started: the figure is measured over a view, and it says so
GIMPI_GROUPD="ipc://$tmp/none/gd" GIMPI_GROUPD_BIN=/bin/false timeout 120 "$BENCH" barrier 2 \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -qE "^gimpi barrier n=2 median_us=$num .* api=view" "$tmp/out"
ok $? "no groupd: the figure comes at view level (exit $rc)" || sed 's/^/# /' "$tmp/out" | head
grep -q "gimpi-bench: no groupd" "$tmp/err"; ok $? "... and stderr says why" || sed 's/^/# /' "$tmp/err" | head
timeout 30 "$BENCH" nosuchfigure 2 >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ]; ok $? "an unknown figure: usage, exit 2"
exit $((failed > 0))
