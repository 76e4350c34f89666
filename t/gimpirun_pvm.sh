#!/bin/bash
# t/gimpirun_pvm.sh — PVM messages over the real data plane: t/pvm_job (a program using
# only <pvm3.h>) under gimpirun — ring and all-to-all in the three encodings, mcast,
# nrecv/trecv/probe, psend/precv; the group calls (groupd's tids are the data plane's);
# 64 MiB to every other task before any receive; tasks that leave early (pvm_exit, or
# plain exit without it) while the others go on; and the same program started from the
# shell as a one-task job.  Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/pvm_job"
. "${top_srcdir:-.}/t/tap.sh"
# job NAME WANT_OK_LINES ARGS...: runs gimpirun, checks exit 0 and the number of ok lines
job() {
    local name=$1 want=$2; shift 2
    timeout 180 "$RUN" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? got
    got=$(grep -c " ok$" "$tmp/out")
    if [ $rc = 0 ] && [ "$got" = "$want" ]; then ok 0 "$name"; else
        ok 1 "$name (exit $rc, $got of $want ok lines)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -30; fi
}
echo "1..24"
job "4 tasks: ring, all-to-all (Default/Raw/InPlace), mcast, nrecv/trecv/probe, psend/precv" 4 -np 4 "$TASK" basic
job "2 tasks: the same" 2 -np 2 "$TASK" basic
job "3 tasks send 64 MiB to every other before any receive" 3 -np 3 "$TASK" big 64
job "with 1 KiB packets and ackmark = hiwater = 1: 2 MiB to every other first" 3 -datalen 1024 -ackmark 1 -hiwater 1 -np 3 "$TASK" big 2
job "4 tasks: join, barrier, freeze; messages to the tids pvm_gettid gives come from the tids pvm_getinst knows; bcast, reduce, gather, scatter" 4 -np 4 "$TASK" groups
job "3 tasks: bodies left on the data plane until unpacked (newest first, decoded, freed unread, in halves, resent after a whole unpack), bcasts (Default, InPlace)" 3 -np 3 "$TASK" lazy
job "2 tasks, 1 KiB packets: the same" 2 -datalen 1024 -np 2 "$TASK" lazy
job "18 tasks: the same, the long bcasts through the forwarding tree (17 receivers)" 18 -np 18 "$TASK" lazy
# GIMPI_PVM_INLINE is one rule for pvm_send and pvm_bcast: a 100-byte body goes in the
# header's message by default, and after it, as a body message of its own (pvm_send's on
# context 4, pvm_bcast's on context 5), when the limit is below 100 (GIMPI_DEBUG shows
# the packets)
export GIMPI_DEBUG=1
job "3 tasks: 100 bytes by pvm_send and pvm_bcast, packed and in place" 3 -np 3 "$TASK" inline
! grep -q " cid=[45] " "$tmp/err"; ok $? "... each in one message (no body message)"
export GIMPI_PVM_INLINE=50
job "the same with GIMPI_PVM_INLINE=50" 3 -np 3 "$TASK" inline
grep -q " cid=4 " "$tmp/err" && grep -q " cid=5 " "$tmp/err"
ok $? "... pvm_send and pvm_bcast both send the body apart"
unset GIMPI_DEBUG GIMPI_PVM_INLINE
job "tasks leave early, with and without pvm_exit; the others go on" 4 -np 4 "$TASK" leave
grep -q "t3 pvm_exit returned" "$tmp/out"; ok $? "pvm_exit returned while the other tasks still worked"
grep -q "t1 saw t4 leave" "$tmp/out" && grep -q "t1 saw t3 leave" "$tmp/out"
ok $? "the last message of each leaver arrived, then its process ended"
grep -q "t1 recv(-1) with everybody gone: PvmSysErr" "$tmp/out"; ok $? "recv(-1) with every other task gone fails instead of hanging"
grep -q "t1 recv from a task that left: PvmSysErr" "$tmp/out"; ok $? "so does a recv from one task that left"
[ ! -s "$tmp/err" ]; ok $? "nobody complained on stderr" || sed 's/^/# /' "$tmp/err" | head
# a native task sends hand-made messages on the PVM contexts, one of them broken
timeout 60 "$RUN" -np 1 "$TASK" junk : -np 1 "$top_builddir/t/job_msg" pvmjunk >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -q "t1 junk ok" "$tmp/out" && grep -q "pvmjunk ok" "$tmp/out"
ok $? "a broken PVM header is PvmBadMsg, the messages after it arrive (exit $rc)" || sed 's/^/# /' "$tmp/out" "$tmp/err" | head
grep -q "PVM message from t[0-9a-f]* with a bad header dropped" "$tmp/err"; ok $? "... and named on stderr"
# started from the shell: a one-task job of its own
out=$(timeout 60 "$TASK" self 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && [ "$out" = "t1 self ok" ]; ok $? "from the shell: tid > 0, no parent, sends to itself ($rc: $out)"
[ ! -s "$tmp/err" ]; ok $? "... quietly" || sed 's/^/# /' "$tmp/err" | head
# the same with no groupd to be found nor started: a blocking recv(-1) fails, no hang
out=$(GIMPI_GROUPD="ipc://$tmp/nogroupd/groupd" GIMPI_GROUPD_BIN=/bin/false \
      timeout 60 "$TASK" self unreachable 2>"$tmp/err"); rc=$?
[ $rc = 0 ] && [ "$out" = "t1 self ok" ]; ok $? "from the shell, no groupd: a recv nothing can satisfy fails ($rc: $out)"
grep -q "groupd" "$tmp/err"; ok $? "... and says groupd is unavailable" || sed 's/^/# /' "$tmp/err" | head
exit $((failed > 0))
