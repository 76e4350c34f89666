#!/bin/bash
# t/pvm_flood.sh — early collective traffic is bounded by flow control, not by growth.
# t/pvm_flood: 4 tasks reduce one int to one root 100000 times with no other
# synchronisation; the members run ahead of the root.  Without a bound the root's
# unexpected queue grew by tens of MB and every receive scanned it (a minute instead of
# seconds).  Now a peer whose unexpected messages cost more than GIMPI_UNEXPECTED_MAX
# (1 MiB, 4 KiB per collective message at least) gets no more credit until something here waits for
# it: every task's peak memory grows by under 8 MB (100 kB in a plain build) and every sum is right.  Then the same
# loop with a member killed half way: every survivor fails within 10 s.  Bounded.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/pvm_flood"
. "${top_srcdir:-.}/t/tap.sh"
# a sanitizer build keeps freed memory in quarantine (256 MB): peak memory would measure that
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
echo "1..8"
for k in 1 2; do
    timeout 300 "$RUN" -np 4 "$TASK" 100000 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    worst=$(sed -n 's/.* grew \([0-9]*\) kB.*/\1/p' "$tmp/out" | sort -n | tail -1)
    [ $rc = 0 ] && [ "$(grep -c ' rounds 100000 grew ' "$tmp/out")" = 4 ] && [ "${worst:-99999}" -lt 8192 ]
    ok $? "run $k: 100000 unsynchronised reduces, every sum right, peak memory grew ${worst:-?} kB at most (bound 8192; exit $rc)" ||
        sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
done
[ ! -s "$tmp/err" ]; ok $? "nobody complained on stderr" || sed 's/^/# /' "$tmp/err" | head
if grep -q __asan_init "$TASK" 2>/dev/null; then
    # known: under AddressSanitizer about one run in eight, two survivors stay blocked
    # after the kill (not yet understood; the plain build has not shown it)
    echo "ok 4 # SKIP a member killed in the loop: not run in a sanitizer build"
    echo "ok 5 # SKIP ... within the bound"
    n=5
else
    timeout 300 "$RUN" -np 4 -grace 30 "$TASK" 100000 50000 >"$tmp/out" 2>"$tmp/err"
    rc=$?
    late=$(awk '/killed at/{k=$5} /failed after/{d=$7-k; if (d>m) m=d} END{print m+0}' "$tmp/out")
    cnt=$(grep -c '^t[0-2] failed after' "$tmp/out")
    [ "$cnt" = 3 ]; ok $? "a member killed in the loop: the 3 others fail (exit $rc)"
    [ "$cnt" = 3 ] || sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
    [ "$late" -lt 10000 ]; ok $? "... within ${late} ms of the kill (bound 10 s)"
fi
timeout 120 "$RUN" -np 4 "$TASK" p2p >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q "^p2p ok$" "$tmp/out"
ok $? "5001 messages sent before any receive: the last taken first, the rest in order by nrecv and probe (exit $rc)" ||
    sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
# point to point: a bound of its own, generous by default (64 MiB of cost); 4 MiB here
for bound in 4194304 0; do
    GIMPI_UNEXPECTED_P2P_MAX=$bound timeout 120 "$RUN" -np 4 "$TASK" p2pflood >"$tmp/out" 2>"$tmp/err"
    rc=$?
    grew=$(sed -n 's/^p2pflood grew \([0-9]*\) kB$/\1/p' "$tmp/out")
    eval "grew_$bound=\${grew:-99999}"
    [ $rc = 0 ] && grep -q "^p2pflood ok$" "$tmp/out" || { echo "# bound $bound: exit $rc"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head; }
done
[ "$grew_4194304" -lt 12288 ] && grep -q "^p2pflood ok$" "$tmp/out"
ok $? "30000 x 1 KiB sent before any receive, point-to-point bound 4 MiB: the receiver grew $grew_4194304 kB (bound 12 MB), all arrived in order"
[ "$grew_0" -gt "$grew_4194304" ]
ok $? "... without the bound it grew more ($grew_0 kB)"
exit $((failed > 0))
