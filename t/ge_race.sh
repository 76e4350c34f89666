#!/bin/bash
# t/ge_race.sh — Debian's `ge` example (4 tasks: spawn, barrier, bcast of gids and tids,
# then each checks every gid and leaves without a barrier) races by design: a slow member
# may see a fast one gone and print "gid N doesn't match up!".  Under real PVM 3.4.6 on
# this machine it happens in a few runs of twenty.  gimpi must not print it more often:
# its members' caches are current from the first barrier on, and a change nobody has told
# a member about is held back briefly (doc/groupd-protocol.md §6).  Runs ge 20 times under
# a private pvmd and 20 times under gimpi, and compares the counts.  Bounded throughout.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
GTAR=/usr/share/doc/pvm-examples/gexamples.tar.gz
if [ ! -r "$GTAR" ] || [ ! -r /usr/include/pvm3.h ] || ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs pvm, pvm-dev and pvm-examples"; exit 0
fi
. "$top_srcdir/t/tap.sh"
RUNS=${GE_RUNS:-20}
echo "1..5"
tar xzf "$GTAR" -C "$tmp" || { echo "Bail out! cannot extract $GTAR"; exit 1; }
# as t/pvm_examples.sh: PVM's K&R code (-w); in a sanitizer build gimpicc adds the
# sanitizers (the library needs their runtime first), minus PVM's own integer overflows
"$GCC" -std=gnu17 -w -fno-sanitize=signed-integer-overflow -o "$tmp/ge_gimpi" "$tmp/gexamples/ge.c"
ok $? "ge builds unchanged with gimpicc"
cc -std=gnu17 -w -o "$tmp/ge_pvm" "$tmp/gexamples/ge.c" -lgpvm3 -lpvm3
ok $? "ge builds with PVM 3.4.6"

# a private pvmd: its own directory, the group server on its path
. "$top_srcdir/t/pvmd_lib.sh"
pvmd_start "$tmp"
# count_done FILE N: waits (bounded) until FILE holds N "done" lines
count_done() {
    for _ in $(seq 1 800); do [ "$(grep -c 'done$' "$1" 2>/dev/null)" -ge "$2" ] && return 0; sleep 0.025; done
    return 1
}
pvm_done=0
: >"$tmp/pvm.err"
if pvmd_up; then
    for k in $(seq 1 "$RUNS"); do
        timeout 60 "$tmp/ge_pvm" 4 >>"$tmp/pvm.out" 2>>"$tmp/pvm.err"
        # the children write to the pvmd's log: wait for their three "done" lines
        count_done "$PVMD_LOG" $((3 * k)) && pvm_done=$((pvm_done + 1))
    done
fi
pvmd_stop
pvm_bad=$(cat "$tmp/pvm.err" "$PVMD_LOG" 2>/dev/null | grep -c "match up")
[ "$pvm_done" = "$RUNS" ]; ok $? "PVM: $pvm_done of $RUNS runs of ge 4 completed; \"doesn't match up\" printed $pvm_bad times"

gimpi_done=0
for k in $(seq 1 "$RUNS"); do
    : >"$tmp/g.out"
    timeout 60 "$tmp/ge_gimpi" 4 >"$tmp/g.out" 2>>"$tmp/g.err"
    # spawned children outlive their parent (as in PVM): wait for their lines
    count_done "$tmp/g.out" 4 && gimpi_done=$((gimpi_done + 1))
done
gimpi_bad=$(grep -c "match up" "$tmp/g.err")
[ "$gimpi_done" = "$RUNS" ]; ok $? "gimpi: $gimpi_done of $RUNS runs completed; \"doesn't match up\" printed $gimpi_bad times"
[ "$pvm_done" = "$RUNS" ] && [ "$gimpi_bad" -le "$pvm_bad" ]
ok $? "gimpi prints it no more often than PVM on this machine ($gimpi_bad <= $pvm_bad)" ||
    grep "match up" "$tmp/g.err" | sort | uniq -c | sed 's/^/# /'
exit $((failed > 0))
