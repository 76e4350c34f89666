#!/bin/bash
# t/trace_pvm_cmp.sh — PVM's tracing, checked against PVM 3.4.6 itself: a small tracer
# task (t/trace_tracer.c) makes itself its children's trace tid, spawns a traced program
# (t/trace_prog.c) and logs the event numbers of the trace messages it receives.  Both
# are built once against PVM (run under a private real pvmd) and once against gimpi; the
# sequence of entry and exit events of the child's top-level calls must be the same.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
if [ ! -r /usr/include/pvm3.h ] || [ ! -r /usr/include/pvmtev.h ] || ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs pvm and pvm-dev"; exit 0
fi
. "$top_srcdir/t/tap.sh"
echo "1..6"
mkdir -p "$tmp/pvmbin" "$tmp/gbin"
cc -std=gnu17 -w -o "$tmp/pvmbin/trace_prog" "$top_srcdir/t/trace_prog.c" -lpvm3 &&
    cc -std=gnu17 -w -o "$tmp/pvmbin/trace_tracer" "$top_srcdir/t/trace_tracer.c" -lpvm3
ok $? "the tracer and the traced program build with PVM 3.4.6"
"$GCC" -std=gnu17 -w -o "$tmp/gbin/trace_prog" "$top_srcdir/t/trace_prog.c" &&
    "$GCC" -std=gnu17 -w -o "$tmp/gbin/trace_tracer" "$top_srcdir/t/trace_tracer.c"
ok $? "they build unchanged with gimpicc"

# a private pvmd: its own directory, our programs on its path
(
    export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP="$tmp/pvm"
    export PVM_PATH="$tmp/pvmbin:/usr/lib/pvm3/lib:/usr/bin"
    mkdir -p "$PVM_TMP"
    pvmd >"$PVM_TMP/stdout" 2>&1 &
    pvmd_pid=$!
    uid=$(id -u)
    for _ in $(seq 1 400); do [ -S "$(cat "$PVM_TMP/pvmd.$uid" 2>/dev/null)" ] && break; sleep 0.025; done
    (cd "$tmp/pvmbin" && timeout 30 ./trace_tracer trace_prog >"$tmp/pvm.log" 2>"$tmp/pvm.err")
    kill -TERM "$pvmd_pid" 2>/dev/null
    wait "$pvmd_pid" 2>/dev/null
)
grep -q ' ENTRY$' "$tmp/pvm.log" && ! grep -q '^bad' "$tmp/pvm.log"
ok $? "PVM: the tracer decoded $(grep -c . "$tmp/pvm.log") events" || sed 's/^/# /' "$tmp/pvm.log" "$tmp/pvm.err" | head -20

(cd "$tmp/gbin" && GIMPI_PATH="$tmp/gbin" timeout 30 ./trace_tracer trace_prog >"$tmp/g.log" 2>"$tmp/g.err")
grep -q ' ENTRY$' "$tmp/g.log" && ! grep -q '^bad' "$tmp/g.log"
ok $? "gimpi: the tracer decoded $(grep -c . "$tmp/g.log") events" || sed 's/^/# /' "$tmp/g.log" "$tmp/g.err" | head -20

diff "$tmp/pvm.log" "$tmp/g.log" >"$tmp/diff"
ok $? "the same events in the same order" || sed 's/^/# /' "$tmp/diff" | head -30
grep -q '^7 ENTRY$' "$tmp/g.log" && grep -q '^47 EXIT$' "$tmp/g.log"
ok $? "gimpi's trace has pvm_send's exit and pvm_exit's entry"
exit $((failed > 0))
