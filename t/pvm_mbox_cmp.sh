#!/bin/bash
# t/pvm_mbox_cmp.sh — the message box against PVM 3.4.6: t/mbox_cmp runs a scripted
# sequence of pvm_putinfo / pvm_recvinfo / pvm_delinfo / pvm_getmboxinfo / pvm_insert /
# pvm_lookup / pvm_delete calls (flags, ownership by a spawned second task, its exit, a
# waiting read) and prints every result, tid-free.  The same source runs under a private
# real pvmd and under gimpi (a private groupd); the two outputs must be the same, line for
# line.  Bounded throughout.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
CMP="$top_builddir/t/mbox_cmp"
GROUPD="$top_builddir/groupd/groupd"
if [ ! -r /usr/include/pvm3.h ] || ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs pvm and pvm-dev"; exit 0
fi
. "$top_srcdir/t/tap.sh"
echo "1..4"
cc -std=gnu17 -w -o "$tmp/mbox_pvm" "$top_srcdir/t/mbox_cmp.c" -lpvm3
ok $? "t/mbox_cmp.c builds with PVM 3.4.6"

# a private pvmd, in a subshell so that PVM's environment stays there
(
    . "$top_srcdir/t/pvmd_lib.sh"
    pvmd_start "$tmp"
    timeout 60 "$tmp/mbox_pvm" main "$tmp/mbox_pvm" >"$tmp/pvm.out" 2>"$tmp/pvm.err"
    echo $? >"$tmp/pvm.rc"
    pvmd_stop
)
[ "$(cat "$tmp/pvm.rc")" = 0 ] && [ "$(wc -l <"$tmp/pvm.out")" -gt 80 ]
ok $? "PVM: the sequence runs ($(wc -l <"$tmp/pvm.out") lines)" || sed 's/^/# /' "$tmp/pvm.err" | head

export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 120 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
timeout 60 "$CMP" main "$CMP" >"$tmp/g.out" 2>"$tmp/g.err"; rc=$?
[ $rc = 0 ] && [ "$(wc -l <"$tmp/g.out")" -gt 80 ]
ok $? "gimpi: the sequence runs (exit $rc)" || sed 's/^/# /' "$tmp/g.err" | head
diff "$tmp/pvm.out" "$tmp/g.out" >"$tmp/diff"
ok $? "gimpi's results are PVM's, line for line ($(wc -l <"$tmp/g.out") lines)" ||
    sed 's/^/# /' "$tmp/diff" | head -40
exit $((failed > 0))
