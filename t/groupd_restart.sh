#!/bin/bash
# t/groupd_restart.sh — a job outlives its groupd on one machine (doc/reliability.md):
# groupd journals every change (groupd/gd_journal.h); killed with SIGKILL mid-loop it is
# started again from the journal by the first task that finds it gone, and every task
# reconnects and sends its requests in flight again (answered once).  Tasks of
# t/groupd_restart_task (8 under gimpirun, 4 from the shell) loop over join, barrier, bcast, reduce, gsize, gettid/getinst,
# the message box and leave, with a pvm_spawn every 100 rounds; instance 0 creates a mark
# file at the rounds named, and the test kills groupd when it appears (events, not
# sleeps).  Checked: every task ends "ok" (no call failed, every sum, size, tid and box
# entry right), the job exits 0, groupd was really replaced, and each task's longest call
# is printed (see STALL_MAX_MS below).
# Also the shell-started case: the same tasks started by hand share a groupd started on
# first use, and are restarted alike; a task idle through the restart keeps its groups
# and one killed meanwhile loses them; a journal that is not ours is refused.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/groupd_restart_task"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
export GIMPI_GROUPD="ipc://$tmp/gd/groupd" RESTART_MARK="$tmp/mark"
export GIMPI_GROUPD_BIN="$GROUPD"
LOCK="$tmp/gd/groupd.lock"
# the longest call of any task: printed, and asserted against 2 s (the issue asks 0.5 s;
# slack for a loaded machine): 30 to 70 ms in 20 runs of the 8-task case here, once 231
STALL_MAX_MS=${STALL_MAX_MS:-2000}

# wait_file FILE: waits (bounded, 60 s) for FILE to appear; false when it did not
wait_file() {
    local i
    for ((i = 0; i < 6000; i++)); do [ -e "$1" ] && return 0; sleep 0.01; done
    return 1
}
# kill_at MARK...: at each mark file, kills the groupd that holds the lock; prints the pids
kill_at() {
    local m pid
    for m in "$@"; do
        wait_file "$RESTART_MARK.$m" || { echo "nomark$m"; return; }
        pid=$(cat "$LOCK" 2>/dev/null)
        stat -c "inode %i" "$tmp/gd/groupd.journal" >>"$tmp/inodes" 2>/dev/null
        [ -n "$pid" ] && kill -9 "$pid" && echo "$pid"
        # the next kill only once a new groupd holds the lock
        for ((i = 0; i < 6000; i++)); do
            [ "$(cat "$LOCK" 2>/dev/null)" != "$pid" ] && break; sleep 0.01; done
    done
}
# check NAME N OUT RC: N ok lines, no FAIL, exit 0, stalls under the bound
check() {
    local name=$1 want=$2 out=$3 rc=$4
    local got stall
    got=$(grep -c " ok rounds=" "$out")
    [ "$rc" = 0 ] && [ "$got" = "$want" ] && ! grep -q FAIL "$out"
    ok $? "$name: $got of $want tasks end ok, exit $rc" || sed 's/^/# /' "$out" "$tmp/err" | head -30
    stall=$(sed -n 's/.*stall_ms=\([0-9.]*\).*/\1/p' "$out" | sort -n | tail -1)
    echo "# longest call of any task: ${stall:-?} ms ($(sed -n 's/.*stall_ms=[0-9.]* (\(.*\))/\1/p' "$out" | sort | uniq -c | tr '\n' ' '))"
    awk -v s="${stall:-99999}" -v m="$STALL_MAX_MS" 'BEGIN { exit !(s <= m) }'
    ok $? "$name: longest call ${stall:-?} ms <= $STALL_MAX_MS ms"
}

echo "1..13"
mkdir -p "$tmp/gd"
# 1. under gimpirun: 8 tasks, 2,000 rounds, groupd killed at round 350 and again at 1,750
#    (rounds with a spawn, whose child's exit the spawner watches with pvm_notify)
#    (the journal passes its 4 MiB bound near round 700 and again later: the third groupd
#    replays a compacted journal)
rm -f "$RESTART_MARK".*
timeout 170 "$RUN" -np 8 "$TASK" 8 2000 350,1750 >"$tmp/out" 2>"$tmp/err" &
job=$!
kill_at 350 1750 >"$tmp/killed"
wait $job
check "gimpirun, 8 tasks, groupd killed twice" 8 "$tmp/out" $?
[ "$(grep -c '^[0-9]' "$tmp/killed")" = 2 ] && [ -n "$(cat "$LOCK")" ] \
    && ! grep -qx "$(cat "$LOCK")" "$tmp/killed"
ok $? "two groupds were killed, a third one serves ($(tr '\n' ' ' <"$tmp/killed")-> $(cat "$LOCK"))"
[ "$(sort -u "$tmp/inodes" | wc -l)" = 2 ]
ok $? "the journal was compacted (a new file) between the kills, and the third groupd started from it"
pkill_one() { [ -n "$1" ] && kill "$1" 2>/dev/null; }
# stops the groupd serving (SIGTERM: a clean exit, its journal removed) and waits until
# its lock is free, so that the next case starts with none
stop_groupd() {
    pkill_one "$(cat "$LOCK" 2>/dev/null)"
    for ((i = 0; i < 1000; i++)); do flock -n "$LOCK" true 2>/dev/null && break; sleep 0.01; done
}
stop_groupd

# 2. started from the shell: 4 tasks of their own, a groupd started on first use
rm -f "$RESTART_MARK".*
pids=
for i in 1 2 3 4; do
    timeout 170 "$TASK" 4 1000 400 >"$tmp/out.$i" 2>>"$tmp/err" &
    pids="$pids $!"
done
kill_at 400 >"$tmp/killed"
rc=0
for p in $pids; do wait "$p" || rc=$?; done
cat "$tmp"/out.[1-4] >"$tmp/out"
check "from the shell, 4 tasks, groupd killed once" 4 "$tmp/out" $rc
[ "$(grep -c '^[0-9]' "$tmp/killed")" = 1 ]
ok $? "the groupd started on first use was killed and replaced"
stop_groupd

# 3. a task that makes no group call while groupd is restarted keeps its groups (its
#    process runs), one killed meanwhile is gone: groupd restarted by hand with a short
#    --reattach (a task's restart uses 10 s)
rm -f "$RESTART_MARK".*
STAT="$top_builddir/programs/gimpi-stat"
"$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >/dev/null 2>&1 &
gd=$!
wait_file "$tmp/gd/groupd" && for ((i = 0; i < 500; i++)); do [ -s "$LOCK" ] && break; sleep 0.01; done
timeout 60 "$TASK" idle keep >"$tmp/idle.out" 2>&1 &
idle=$!
wait_file "$RESTART_MARK.joined"
mv "$RESTART_MARK.joined" "$RESTART_MARK.joined1"
RESTART_MARK="$RESTART_MARK.x" "$TASK" idle lost >/dev/null 2>&1 &     # (killed below)
lost=$!
wait_file "$RESTART_MARK.x.joined"
kill -9 $gd $lost
wait $gd $lost 2>/dev/null
"$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" --reattach 300 >/dev/null 2>"$tmp/gd.err" &
gd=$!
# for 1.5 s (five times the reattach period) the idle task stays in "keep", and "lost"
# goes within that time
kept=yes
for ((i = 0; i < 15; i++)); do
    "$STAT" >"$tmp/stat" 2>&1
    grep -q "group: keep, size: 1" "$tmp/stat" || kept=no
    sleep 0.1
done
gone=yes
grep -q "group: lost" "$tmp/stat" && gone=no
[ $kept = yes ]; ok $? "a task with no group call during the restart keeps its group" || sed 's/^/# /' "$tmp/stat"
[ $gone = yes ]; ok $? "a task killed while groupd was down is gone from its group" || sed 's/^/# /' "$tmp/stat"
touch "$RESTART_MARK.go"
wait $idle
grep -q "t0 idle ok" "$tmp/idle.out"; ok $? "... and finds itself instance 0 of 1 afterwards" || sed 's/^/# /' "$tmp/idle.out"
kill $gd; wait $gd

# 3b. a groupd started afresh on the endpoint (no journal: another task's first use, say)
#     is not taken for a restart: the idle task's next call fails, as if none were there
rm -f "$RESTART_MARK".*
"$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >/dev/null 2>&1 &
gd=$!
wait_file "$tmp/gd/groupd" && for ((i = 0; i < 500; i++)); do [ -s "$LOCK" ] && break; sleep 0.01; done
timeout 60 "$TASK" idle fresh >"$tmp/idle.out" 2>&1 &
idle=$!
wait_file "$RESTART_MARK.joined"
kill -9 $gd
wait $gd 2>/dev/null
"$GROUPD" --foreground --no-journal --endpoint "$GIMPI_GROUPD" >/dev/null 2>&1 &
gd=$!
for ((i = 0; i < 500; i++)); do [ -s "$LOCK" ] && [ "$(cat "$LOCK")" = $gd ] && break; sleep 0.01; done
touch "$RESTART_MARK.go"
wait $idle
grep -q "t0 FAIL still a member after the restart: joining again: -14 " "$tmp/idle.out"
ok $? "a fresh groupd on the endpoint is not a restart: the call fails with PvmSysErr" || sed 's/^/# /' "$tmp/idle.out"
kill $gd; wait $gd

# 4. a journal that is not ours, or corrupt, is refused with a message
(umask 077; printf 'not a journal at all, just bytes that go on and on\n' >"$tmp/gd/groupd.journal")
out=$(timeout 20 "$GROUPD" --foreground --endpoint "ipc://$tmp/gd/groupd" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "journal .*: record at byte 0"
ok $? "a corrupt journal: groupd refuses to start, and says why (exit $rc: $out)"
rm -f "$tmp/gd/groupd.journal"
ln -s /etc/passwd "$tmp/gd/groupd.journal"
out=$(timeout 20 "$GROUPD" --foreground --endpoint "ipc://$tmp/gd/groupd" 2>&1); rc=$?
[ $rc = 1 ] && echo "$out" | grep -q "symbolic link"
ok $? "a journal that is a symbolic link is not followed (exit $rc)"
rm -f "$tmp/gd/groupd.journal"
exit $((failed > 0))
