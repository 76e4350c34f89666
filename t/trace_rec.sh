#!/bin/bash
# t/trace_rec.sh — GIMPI_TRACE records a whole job: a master and 3 workers it spawns
# (t/trace_job.c: a group, two barriers, a bcast, answers, a reduce) each leave a file
# DIR/<tid>.gtev; every call's record is closed, every received message pairs with its
# send across files (source, destination, seq), the group events and the collectives' own
# transfers are there, each task recorded its exit.  A tiny ring (GIMPI_TRACE_BUFFER=4096)
# gives the same records.  A folder that cannot be written loses the trace, not the job.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
GCC="$top_builddir/programs/gimpicc"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
echo "1..13"
"$GCC" -std=gnu17 -Wall -I"$top_srcdir/libgimpi" -o "$tmp/trace_job" "$top_srcdir/t/trace_job.c"
ok $? "trace_job builds with gimpicc"

run() {     # run DIR [ENV...]: the job, recording into DIR; its checker's findings in $tmp/out
    local dir=$1; shift
    mkdir -p "$dir"
    env GIMPI_TRACE="$dir" "$@" timeout 60 "$tmp/trace_job" run >"$tmp/job.out" 2>&1
    local rc=$?
    "$tmp/trace_job" check "$dir" >"$tmp/out"
    return $rc
}
run "$tmp/t1"
ok $? "the job runs with GIMPI_TRACE set" || sed 's/^/# /' "$tmp/job.out" | head
# the workers outlive the master's exit by a little: their files come when they end
for _ in $(seq 1 200); do "$tmp/trace_job" check "$tmp/t1" | grep -qx 'exits 4 .*' && break; sleep 0.05; done
"$tmp/trace_job" check "$tmp/t1" >"$tmp/out"
sed 's/^/# /' "$tmp/out"
grep -qx 'files 4 bad 0' "$tmp/out"; ok $? "4 tasks, 4 files, all readable"
grep -qE '^calls [1-9][0-9]* unbalanced 0$' "$tmp/out"; ok $? "every call's record is closed"
grep -qE '^pairs ([0-9]+) of \1$' "$tmp/out" && ! grep -qx 'pairs 0 of 0' "$tmp/out"
ok $? "every message received pairs with its send (source, destination, seq)"
grep -qx 'exits 4 joins 4 leaves 4' "$tmp/out"; ok $? "4 exits, joins and leaves"
grep -qx 'barriers in 8 out 8' "$tmp/out"; ok $? "2 barriers each, entered and left"
grep -qE '^coll [1-9][0-9]* spawns 3$' "$tmp/out"; ok $? "the collectives' own transfers, 3 spawns"
ls "$tmp/t1" | grep -qxE '4[0-9a-f]{4}\.gtev'; ok $? "files are named by tid in hex ($(ls "$tmp/t1" | head -1))"

run "$tmp/t2" GIMPI_TRACE_BUFFER=4096
for _ in $(seq 1 200); do "$tmp/trace_job" check "$tmp/t2" | grep -qx 'exits 4 .*' && break; sleep 0.05; done
"$tmp/trace_job" check "$tmp/t2" >"$tmp/out2"
grep -v '^calls\|^coll' "$tmp/out" >"$tmp/a"; grep -v '^calls\|^coll' "$tmp/out2" >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b"; ok $? "a 4 KiB ring gives the same findings" || sed 's/^/# /' "$tmp/out2"
grep -qE '^calls [1-9][0-9]* unbalanced 0$' "$tmp/out2"; ok $? "... every call closed"

env GIMPI_TRACE="$tmp/none/such" timeout 60 "$tmp/trace_job" run >"$tmp/job.out" 2>&1
ok $? "a folder that does not exist: the job still runs" || sed 's/^/# /' "$tmp/job.out" | head
[ ! -e "$tmp/none" ]; ok $? "... and nothing is made"
exit $((failed > 0))
