#!/bin/bash
# t/tcp_path.sh — the data-plane and collective tests again with GIMPI_LOCAL_SOCKETS=0, so
# that every host connection is TCP, as between machines: the rest of the suite runs the
# tasks of one machine over local sockets (t/host_local.c), and only t/host_dance,
# t/dataplane_fault and t/netns.sh would otherwise see the engine on TCP.  Each program is
# a TAP test of its own; this passes when each exits 0 within its bound.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
progs="dataplane coll dyn_hosts"
echo "1..3"
for p in $progs; do
    GIMPI_LOCAL_SOCKETS=0 timeout 300 "$top_builddir/t/$p" >"$tmp/$p.out" 2>&1
    rc=$?
    nok=$(grep -c '^not ok' "$tmp/$p.out")
    npass=$(grep -c "^ok" "$tmp/$p.out")
    [ $rc = 0 ] && [ "$nok" = 0 ] && [ "$npass" -gt 0 ]
    ok $? "t/$p over TCP only: $npass passed, $nok failed (exit $rc)"
    if [ $rc != 0 ]; then   # the failures first, then their diagnostics
        grep '^not ok' "$tmp/$p.out" | head -10 | sed 's/^/# /'
        grep -A12 '^not ok' "$tmp/$p.out" | grep '^#' | head -30 | sed 's/^/# /'
    fi
done
exit $((failed > 0))
