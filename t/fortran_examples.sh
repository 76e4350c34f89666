#!/bin/bash
# t/fortran_examples.sh — PVM's own Fortran examples (Debian's pvm-examples, extracted at
# test time, never committed) build unchanged with gimpifort, their
# `include '../include/fpvm3.h'` included, and run: spmd (pvmfsiblings token ring) under
# gimpirun -np 4; master1 with its slave fslave1 (spawn, mcast, REAL8 results); hitc with
# hitc_slave (pvmfconfig, a work farm); gexample (join, freeze, bcast, reduce with PvmSum
# and a Fortran function) from the shell, spawning fgexample; frsg (scatter, gather,
# reduce with PvmSum and a Fortran function on REAL8), spawning itself.  The results are
# the ones PVM 3.4.6 prints.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/fortran_lib.sh"
TAR=/usr/share/doc/pvm-examples/examples.tar.gz GTAR=/usr/share/doc/pvm-examples/gexamples.tar.gz
if [ ! -r "$TAR" ] || [ ! -r "$GTAR" ]; then echo "1..0 # SKIP pvm-examples is not installed"; exit 0; fi
tar xzf "$TAR" -C "$tmp" && tar xzf "$GTAR" -C "$tmp" ||
    { echo "1..0 # SKIP cannot extract the examples"; exit 0; }
echo "1..9"
E="$tmp/examples" X="$tmp/x"
mkdir -p "$X"
# the names PVM's makefiles give them (master1 spawns fslave1, gexample fgexample)
built=0
for p in spmd:spmd master1:master1 slave1:fslave1 hitc:hitc hitc_slave:hitc_slave \
         gexample:fgexample ../gexamples/frsg:frsg; do
    "$FORT" -o "$X/${p#*:}" "$E/${p%:*}.f" >"$tmp/fc.out" 2>&1 && built=$((built + 1)) ||
        sed 's/^/# /' "$tmp/fc.out" | grep -v Warning | head -5
done
[ $built = 7 ]; ok $? "spmd.f, master1.f, slave1.f, hitc.f, hitc_slave.f, gexample.f, frsg.f build unchanged"

# run NAME REGEX COUNT ARGS...: runs ARGS (bounded); its output has COUNT lines matching REGEX
run() {
    local name=$1 re=$2 want=$3; shift 3
    timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? got
    got=$(grep -Ec -- "$re" "$tmp/out")
    if [ "$got" = "$want" ]; then ok 0 "$name"; else
        ok 1 "$name (exit $rc, $got of $want lines)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
run "spmd: gimpirun -np 4 passes the token round the ring" "token ring done" 1 \
    "$RUN" -np 4 "$X/spmd"
ring=$(grep -E "^ *[0-9]+( -> +[0-9]+){4} *$" "$tmp/out" | tr -d '>-')
set -- $ring
[ $# = 5 ] && [ "$5" = "$1" ]; ok $? "... of the 4 sibling tids ($ring)"
run "master1: 3 fslave1 tasks, each result as expected" \
    "^ I got +([0-9.]+) from +[0-9]+ \(expected +\1 \)$" 3 "$X/master1"
run "hitc: a work farm on hitc_slave" "^ Program Finished" 1 "$X/hitc"
run "gexample from the shell (fgexample): the 1-norm" "The 1-Norm is +5050$" 1 "$X/fgexample"
grep -Eq "product of column 1 is +9\.33262154439441[0-9]*E\+157" "$tmp/out"
ok $? "... and 100 factorial from the Fortran reduce function"
(cd "$X" && printf '4\n5\n' | timeout 60 ./frsg >"$tmp/out" 2>"$tmp/err")
grep -Eq "Test OK: Sum of Squares of first +20 +integers is +2870" "$tmp/out"
ok $? "frsg 4 x 5: scatter, gather, PvmSum" || sed 's/^/# /' "$tmp/out" "$tmp/err" | head
grep -Eq "Test Ok: Received \( +5\.0+ +, +2\.0+ +\)" "$tmp/out"
ok $? "... and a Fortran reduce function on REAL8 (max with its location)"
exit $((failed > 0))
