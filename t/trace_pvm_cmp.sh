#!/bin/bash
# t/trace_pvm_cmp.sh — PVM's tracing, checked against PVM 3.4.6 itself: a small tracer
# task (t/trace_tracer.c) makes itself its children's trace tid, spawns a traced program
# and logs, per task, the events of the trace messages it receives.  Tracer and programs
# are built once against PVM (run under a private real pvmd) and once against gimpi; for
# every task, the sequence of entry and exit events of its top-level calls must be the
# same.  Programs: t/trace_prog.c (buffers, packing, send/receive, options, masks) and
# Debian's spmd (4 siblings passing a token round a ring).
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
if [ ! -r /usr/include/pvm3.h ] || [ ! -r /usr/include/pvmtev.h ] || ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs pvm and pvm-dev"; exit 0
fi
. "$top_srcdir/t/tap.sh"
TAR=/usr/share/doc/pvm-examples/examples.tar.gz
echo "1..12"
mkdir -p "$tmp/pvmbin" "$tmp/gbin"
XF="-std=gnu17 -w -fno-sanitize=signed-integer-overflow"
GTAR=/usr/share/doc/pvm-examples/gexamples.tar.gz
progs="trace_prog"
if tar xzf "$TAR" -C "$tmp" 2>/dev/null && tar xzf "$GTAR" -C "$tmp" 2>/dev/null; then
    cp "$tmp/examples/spmd.c" "$tmp/gexamples/tst.c" "$tmp/gexamples/gexamp.c" "$tmp/"
    progs="$progs spmd tst gexamp"
fi
build() {   # build CC OUTDIR LIBS FLAGS...: the tracer and the programs
    local cc=$1 out=$2 libs=$3 p; shift 3
    "$cc" "$@" -o "$out/trace_tracer" "$top_srcdir/t/trace_tracer.c" $libs || return 1
    "$cc" "$@" -o "$out/trace_prog" "$top_srcdir/t/trace_prog.c" $libs || return 1
    for p in $progs; do
        [ "$p" = trace_prog ] || "$cc" "$@" -o "$out/$p" "$tmp/$p.c" $libs || return 1
    done
}
build cc "$tmp/pvmbin" "-lgpvm3 -lpvm3" -std=gnu17 -w
ok $? "the tracer and the traced programs build with PVM 3.4.6"
build "$GCC" "$tmp/gbin" "" $XF
ok $? "they build unchanged with gimpicc"

# trace SIDE: runs the tracer on every program (cwd: SIDE's bin), one log per program
trace() {
    local side=$1
    (cd "$tmp/${side}bin" &&
     timeout 40 ./trace_tracer -a trace_prog >"$tmp/$side.trace_prog" 2>"$tmp/$side.err" &&
     { [ ! -x spmd ] || timeout 40 ./trace_tracer -n 4 spmd >"$tmp/$side.spmd" 2>>"$tmp/$side.err"; } &&
     { [ ! -x tst ] || timeout 40 ./trace_tracer tst >"$tmp/$side.tst" 2>>"$tmp/$side.err"; } &&
     { [ ! -x gexamp ] || timeout 40 ./trace_tracer -t 4 gexamp 4 >"$tmp/$side.gexamp" 2>>"$tmp/$side.err"; })
}
# under a private pvmd (its environment stays in the subshell), then under gimpi
(
    . "$top_srcdir/t/pvmd_lib.sh"
    pvmd_start "$tmp/pvmbin" && trace pvm
    pvmd_stop
)
GIMPI_PATH="$tmp/gbin" trace g

for p in $progs; do
    nt=$(grep -c "^task" "$tmp/pvm.$p" 2>/dev/null)
    grep -q '^task .*26+' "$tmp/pvm.$p" 2>/dev/null && ! grep -q '^bad' "$tmp/pvm.$p"
    ok $? "PVM: the tracer decoded the events of $p ($nt tasks)" ||
        sed 's/^/# /' "$tmp/pvm.$p" "$tmp/pvm.err" 2>/dev/null | head -10
    grep '^task' "$tmp/pvm.$p" 2>/dev/null | sort >"$tmp/pvm.$p.sorted"
    grep '^task' "$tmp/g.$p" 2>/dev/null | sort >"$tmp/g.$p.sorted"
    diff "$tmp/pvm.$p.sorted" "$tmp/g.$p.sorted" >"$tmp/diff"
    ok $? "$p: gimpi's tracer got the same events, in the same order, for every task" ||
        sed 's/^/# /' "$tmp/diff" "$tmp/g.err" | head -30
    head -1 "$tmp/g.$p.sorted" | cut -c1-150 | sed 's/^/# /'
done
[ -f "$tmp/spmd.c" ] || for _ in 1 2 3 4 5 6; do skip "no pvm-examples: spmd, tst, gexamp not traced"; done
grep -q ' 7+$' "$tmp/g.trace_prog" && grep -q ' 47-' "$tmp/g.trace_prog"
ok $? "gimpi's trace has pvm_send's exit and pvm_exit's entry"
grep -c '^task' "$tmp/g.spmd" 2>/dev/null | grep -qx 4
ok $? "the 4 spmd siblings inherited the tracer ($(grep -c '^task' "$tmp/g.spmd" 2>/dev/null) traced)"
exit $((failed > 0))
