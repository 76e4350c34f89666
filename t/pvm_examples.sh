#!/bin/bash
# t/pvm_examples.sh — PVM's own example programs (Debian's pvm-examples, extracted at test
# time, never committed), built unchanged with gimpicc and run under gimpirun: spmd
# (pvm_siblings token ring, also from the shell), and ptest and the four bwtest variants
# (PvmDataDefault, Raw, InPlace packing, psend/precv), which use libgimpi's group calls
# (pvm_joingroup, pvm_gettid, pvm_freezegroup, pvm_lvgroup) over groupd.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
RUN="$top_builddir/groupd/gimpirun"
GCC="$top_builddir/groupd/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
TAR=/usr/share/doc/pvm-examples/examples.tar.gz
if [ ! -r "$TAR" ]; then echo "1..0 # SKIP pvm-examples is not installed ($TAR)"; exit 0; fi
. "${top_srcdir:-.}/t/tap.sh"
tar xzf "$TAR" -C "$tmp" || { echo "1..0 # SKIP cannot extract $TAR"; exit 0; }
E="$tmp/examples"
# PVM's code is K&R (-w), and bwtest.c's validation overflows int (n*n for n > 46340):
# harmless there, but a sanitizer build must not stop on PVM's own undefined behaviour
XF="-std=gnu17 -w -fno-sanitize=signed-integer-overflow"
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
# run NAME REGEX ARGS...: runs ARGS (bounded), checks the output for REGEX
run() {
    local name=$1 re=$2; shift 2
    timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ $rc != 124 ] && grep -Eq -- "$re" "$tmp/out"; then ok 0 "$name"; else
        ok 1 "$name (exit $rc)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
echo "1..14"
"$GCC" $XF -o "$tmp/spmd" "$E/spmd.c"; ok $? "spmd.c builds unchanged"
# spmd exits 1 by itself (its last line is exit(1)), so only its output is checked
run "spmd: gimpirun -np 4 passes the token round the ring" \
    "token ring done" "$RUN" -np 4 "$tmp/spmd"
ring=$(grep -E "^ *[0-9]+( -> +[0-9]+){4} *$" "$tmp/out" | tr -d '>-')
set -- $ring
[ $# = 5 ] && [ "$2" = $(($1 + 1)) ] && [ "$3" = $(($1 + 2)) ] && [ "$4" = $(($1 + 3)) ] && [ "$5" = "$1" ]
ok $? "... of the 4 sibling tids, one block from groupd ($ring)"
run "spmd from the shell: a 1-tid ring" "token ring done" "$tmp/spmd"

"$GCC" $XF -o "$tmp/ptest" "$E/ptest.c"; ok $? "ptest.c builds unchanged"
run "ptest: gimpirun -np 4 ptest 4" "Data validated from all tasks" "$RUN" -np 4 "$tmp/ptest" 4
for v in "d -DPACK -DENCODE=PvmDataDefault" "r -DPACK -DENCODE=PvmDataRaw" \
         "i -DPACK -DENCODE=PvmDataInPlace" "p"; do
    set -- $v; name=${1}bwtest; shift
    if "$GCC" $XF "$@" -o "$tmp/$name" "$E/bwtest.c"; then
        run "$name: gimpirun -np 2, ping-pong up to 800000 bytes, data validated" \
            "Data size: 800000" "$RUN" -np 2 "$tmp/$name"
        grep -q "100000 doubles received correctly" "$tmp/out"; ok $? "... $name validated its data"
    else
        ok 1 "$name builds"; skip "$name not run"
    fi
done
exit $((failed > 0))
