#!/bin/bash
# t/trace_pvm_cmp2.sh — XPVM's way of tracing, checked against PVM 3.4.6 itself: the tracer
# task of t/trace_tracer.c registers with pvm_reg_tracer (-r) and starts programs from the
# shell, which have no parent and so inherit no tracer: they must find the registered one
# and trace to it.  Runs under a private real pvmd, then under gimpi (a private groupd):
# the registration's results (a second tracer gets PvmAlready, the tracer's second call
# unregisters, a tracer that exits without unregistering leaves no registration behind),
# the events of the second would-be tracer, and of Debian's `ge` from the shell (3 tasks:
# it spawns the other two, which inherit the tracer), per task, in order, must be the same.
# Also the Fortran `gexample` (as fgexample, spawned by the tracer: PVM 3.4.6's
# pvmfsiblings crashes in a shell-started traced task), built with gfortran and PVM's
# libraries and with gimpifort.  PVM's pvm_freezegroup has no event of its own: PVM
# traces the calls its group library makes to talk to the group server (mytid, setcontext,
# mkbuf, ... trecv, upkint ...); gimpi has no group server and sends nothing for it, so
# that run of events is taken out of PVM's log before comparing (doc/pvm-differences.md).
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
FORT="$top_builddir/programs/gimpifort"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
TAR=/usr/share/doc/pvm-examples/examples.tar.gz GTAR=/usr/share/doc/pvm-examples/gexamples.tar.gz
if [ ! -r /usr/include/pvm3.h ] || [ ! -r /usr/include/pvmtev.h ] || ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs pvm and pvm-dev"; exit 0
fi
if [ ! -r "$TAR" ] || [ ! -r "$GTAR" ]; then echo "1..0 # SKIP needs pvm-examples"; exit 0; fi
. "$top_srcdir/t/tap.sh"
echo "1..11"
tar xzf "$TAR" -C "$tmp" && tar xzf "$GTAR" -C "$tmp" || { echo "Bail out! cannot extract"; exit 1; }
P="$tmp/pvmbin" G="$tmp/gbin"
mkdir -p "$P" "$G"
XF="-std=gnu17 -w -fno-sanitize=signed-integer-overflow"
cc -std=gnu17 -w -o "$P/trace_tracer" "$top_srcdir/t/trace_tracer.c" -lgpvm3 -lpvm3 &&
    cc -std=gnu17 -w -o "$P/ge" "$tmp/gexamples/ge.c" -lgpvm3 -lpvm3
ok $? "the tracer and ge build with PVM 3.4.6"
"$GCC" $XF -o "$G/trace_tracer" "$top_srcdir/t/trace_tracer.c" && "$GCC" $XF -o "$G/ge" "$tmp/gexamples/ge.c"
ok $? "they build unchanged with gimpicc"
fortran=0
if command -v gfortran >/dev/null && ls /usr/lib/*/libfpvm3.a >/dev/null 2>&1; then
    # gexample.f includes '../include/fpvm3.h': from /usr/include that is PVM's own
    gfortran -fallow-argument-mismatch -w -I/usr/include -o "$P/fgexample" \
        "$tmp/examples/gexample.f" -lfpvm3 -lgpvm3 -lpvm3 >"$tmp/fc.out" 2>&1 &&
        "$FORT" -o "$G/fgexample" "$tmp/examples/gexample.f" >>"$tmp/fc.out" 2>&1 && fortran=1
    [ $fortran = 1 ] || sed 's/^/# /' "$tmp/fc.out" | grep -v Warning | head -5
fi

# trace SIDE: in SIDE's bin (first on PATH, so ge spawns itself by its name), bounded
trace() {
    local s=$1
    (cd "$tmp/${s}bin" && export PATH="$tmp/${s}bin:$PATH" &&
     timeout 40 ./trace_tracer -r trace_tracer -q >"$tmp/$s.reg" 2>"$tmp/$s.err"
     timeout 40 ./trace_tracer -r -k -t 3 ge 3 >"$tmp/$s.ge" 2>>"$tmp/$s.err"
     timeout 40 ./trace_tracer -r trace_tracer -q >"$tmp/$s.reg2" 2>>"$tmp/$s.err"
     [ ! -x fgexample ] || timeout 40 ./trace_tracer -t 2 fgexample >"$tmp/$s.fgexample" 2>>"$tmp/$s.err")
}
(
    . "$top_srcdir/t/pvmd_lib.sh"
    pvmd_start "$P" && trace pvm
    pvmd_stop
)
GIMPI_GROUPD="ipc://$tmp/groupd" GIMPI_GROUPD_BIN="$top_builddir/groupd/groupd" \
    GIMPI_PATH="$G" trace g

# the registration's answers: reg 0, second reg PvmAlready, unreg 0; again after -k
want='reg 0
second reg -30
unreg 0'
[ "$(grep -v '^task' "$tmp/pvm.reg")" = "$want" ] && [ "$(grep -v '^task' "$tmp/pvm.reg2")" = "$want" ]
ok $? "PVM: registered, a second tracer gets PvmAlready, unregistered; none left after an exit" ||
    sed 's/^/# /' "$tmp/pvm.reg" "$tmp/pvm.reg2" "$tmp/pvm.err" | head
[ "$(grep -v '^task' "$tmp/g.reg")" = "$want" ] && [ "$(grep -v '^task' "$tmp/g.reg2")" = "$want" ]
ok $? "gimpi: the same answers" || sed 's/^/# /' "$tmp/g.reg" "$tmp/g.reg2" "$tmp/g.err" | head

# same P: the per-task logs of program P, sorted, are the same under both (PVM's filtered
# through FILTER)
same() {
    grep '^task' "$tmp/pvm.$1" 2>/dev/null | sed -E "${2:-}" | sort >"$tmp/pvm.$1.sorted"
    grep '^task' "$tmp/g.$1" 2>/dev/null | sort >"$tmp/g.$1.sorted"
    diff "$tmp/pvm.$1.sorted" "$tmp/g.$1.sorted" >"$tmp/diff"
}
grep -qx 'task 74+ 74- 7+' "$tmp/pvm.reg" && same reg
ok $? "the shell-started second tracer traced to the registered one: same events" ||
    sed 's/^/# /' "$tmp/diff" | head
[ "$(grep -c '^task .*26+' "$tmp/pvm.ge")" = 3 ] && ! grep -q '^bad' "$tmp/pvm.ge"
ok $? "PVM: ge from the shell and its 2 children traced to the registered tracer" ||
    sed 's/^/# /' "$tmp/pvm.ge" "$tmp/pvm.err" | head
same ge
ok $? "ge: gimpi's registered tracer got the same events, in the same order, for every task" ||
    sed 's/^/# /' "$tmp/diff" "$tmp/g.err" | head -20
head -1 "$tmp/g.ge.sorted" | cut -c1-150 | sed 's/^/# /'
(cd "$G" && GIMPI_GROUPD="ipc://$tmp/groupd" GIMPI_GROUPD_BIN="$top_builddir/groupd/groupd" \
    timeout 20 ./trace_tracer -0 >"$tmp/g.null" 2>&1)
grep -qx 'null reg -2' "$tmp/g.null"
ok $? "gimpi: a NULL mask is PvmBadParam (PVM's libpvm crashes)" || sed 's/^/# /' "$tmp/g.null"
[ "$(grep -c '^task' "$tmp/g.ge")" = 3 ] && [ "$(grep -c '^task' "$tmp/g.reg2")" = 1 ]
ok $? "gimpi: 3 ge tasks traced; the -q task of the next tracer too"
if [ $fortran = 1 ]; then
    [ "$(grep -c '^task .*26+' "$tmp/pvm.fgexample")" = 2 ] && ! grep -q '^bad' "$tmp/pvm.fgexample"
    ok $? "PVM: gexample (Fortran) and its copy traced" ||
        sed 's/^/# /' "$tmp/pvm.fgexample" "$tmp/pvm.err" | head
    gs=' 26\+ 26- 26\+ 26- 98\+ 98- 24\+ 24- 51\+ 51- 42\+ 42- 36\+ 36- 47\+ 47- 50\+ 50-'
    gs="$gs 57\+ 57-( 63\+ 63-| 69\+ 69-)* 51\+ 51- 8\+ 8- 50\+ 50- 8\+ 8- 98\+ 98-"
    same fgexample "s/$gs//"
    ok $? "gexample: the same events for every task (PVM's group-server talk taken out)" ||
        sed 's/^/# /' "$tmp/diff" "$tmp/g.err" | head -20
else
    skip "no gfortran or PVM's libfpvm3: gexample not traced"
    skip "no gfortran or PVM's libfpvm3: gexample not traced"
fi
exit $((failed > 0))
