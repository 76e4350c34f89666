#!/bin/bash
# t/groupd_standby.sh — a standby groupd takes over from its primary (doc/reliability.md
# §3), on one machine over tcp on loopback: groupd --standby-of follows the primary's
# journal; tasks of t/groupd_restart_task (join, barrier, bcast, reduce, gsize,
# gettid/getinst, the message box, leave, a pvm_spawn every 100 rounds) started from the
# shell with GIMPI_GROUPD listing the primary and its standbys; instance 0 creates a mark
# file at the rounds named and the test then kills the groupd serving with SIGKILL
# (events, not sleeps; about 30 s in all).  Checked: every task ends "ok" (no call failed, every answer
# right), the standby said it took over, and the longest call of any task is printed and
# under STALL_MAX_MS.  The journals are compacted every 100 rounds or so (--journal-max
# 256 KiB): the standby is sent each new file as an image.  Case 2 starts a new standby of the new primary and kills that one
# too.  Case 3 fences: a primary stopped (SIGSTOP) until its standby took over, then
# continued, exits 4 "fenced by term 2" and the tasks end ok on the new one.  Also
# refused: --standby-of without --journal, and following a primary that keeps no
# journal.  Case 5: a following standby stopped by SIGTERM exits 0 and removes its
# journal, and its primary does not say "going on alone".
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
GROUPD="$top_builddir/groupd/groupd"
TASK="$top_builddir/t/groupd_restart_task"
STALL_MAX_MS=${STALL_MAX_MS:-2000}
unset GIMPI_KEY_FD GIMPI_GROUPD_RESTARTABLE
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/key"; echo >>"$tmp/key"; chmod 600 "$tmp/key"
export GIMPI_KEY_FILE="$tmp/key" RESTART_MARK="$tmp/mark" GIMPI_GROUPD_BIN="$GROUPD"
export GIMPI_PATH="$top_builddir/t"
base=$((26000 + ($$ % 600) * 6))
ep() { echo "tcp://127.0.0.1:$((base + 2 * $1))"; }      # groupd number $1's endpoint

# waitfor FILE RE: waits (bounded, 60 s) until FILE has a line matching RE
waitfor() {
    local i
    for ((i = 0; i < 6000; i++)); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.01; done
    return 1
}
# start N [--standby-of M]: groupd number N (its journal $tmp/jN, its stderr $tmp/gdN.err)
start() {
    local n=$1; shift
    "$GROUPD" --foreground --endpoint "$(ep "$n")" --pub-port $((base + 2 * n + 1)) \
        --journal "$tmp/j$n" --journal-max 262144 ${1:+--standby-of "$(ep "$2")"} >"$tmp/gd$n.out" 2>"$tmp/gd$n.err" &
    eval "gd$n=$!"
    if [ $# = 0 ]; then waitfor "$tmp/gd$n.out" tcp:// ; else waitfor "$tmp/gd$n.err" following; fi
}
# tasks N ROUNDS MARKS: starts N tasks in the background (pids in $pids)
tasks() {
    local i
    rm -f "$RESTART_MARK".* "$tmp"/out.*
    pids=
    for ((i = 1; i <= $1; i++)); do
        timeout 120 "$TASK" "$1" "$2" "$3" >"$tmp/out.$i" 2>>"$tmp/err" &
        pids="$pids $!"
    done
}
# check NAME N: the tasks' exits, N ok lines, no FAIL; the longest call under the bound
# (with STALL no: only printed)
check() {
    local name=$1 want=$2 rc=0 p got stall
    for p in $pids; do wait "$p" || rc=$?; done
    cat "$tmp"/out.* >"$tmp/out"
    got=$(grep -c " ok rounds=" "$tmp/out")
    [ "$rc" = 0 ] && [ "$got" = "$want" ] && ! grep -q FAIL "$tmp/out"
    ok $? "$name: $got of $want tasks end ok, exit $rc" || sed 's/^/# /' "$tmp/out" "$tmp/err" "$tmp"/gd*.err | head -40
    stall=$(sed -n 's/.*stall_ms=\([0-9.]*\).*/\1/p' "$tmp/out" | sort -n | tail -1)
    echo "# longest call of any task: ${stall:-?} ms ($(sed -n 's/.*stall_ms=[0-9.]* (\(.*\))/\1/p' "$tmp/out" | sort | uniq -c | tr '\n' ' '))"
    [ "${3:-yes}" = no ] && return
    awk -v s="${stall:-99999}" -v m="$STALL_MAX_MS" 'BEGIN { exit !(s <= m) }'
    ok $? "$name: longest call ${stall:-?} ms <= $STALL_MAX_MS ms"
}

echo "1..14"
# 1. a primary and its standby; the primary killed at round 150 of 450
start 0
start 1 --standby-of 0
export GIMPI_GROUPD="$(ep 0),$(ep 1),$(ep 2)"
tasks 4 450 150,300
for ((i = 0; i < 6000; i++)); do [ -e "$RESTART_MARK.150" ] && break; sleep 0.01; done
kill -9 "$gd0"
waitfor "$tmp/gd1.err" "took over"
grep -q "took over from $(ep 0): serving $(ep 1) at term 2" "$tmp/gd1.err"
ok $? "the standby took over at term 2 ($(grep -o 'primary at .*' "$tmp/gd1.err" | head -1))" || sed 's/^/# /' "$tmp/gd1.err"
# 2. a new standby of the new primary; that primary killed at round 300
start 2 --standby-of 1
grep -q "following" "$tmp/gd2.err"
ok $? "a new standby follows the new primary" || sed 's/^/# /' "$tmp/gd2.err" "$tmp/gd1.err"
for ((i = 0; i < 6000; i++)); do [ -e "$RESTART_MARK.300" ] && break; sleep 0.01; done
kill -9 "$gd1"
waitfor "$tmp/gd2.err" "took over"
grep -q "took over from $(ep 1): serving $(ep 2) at term 3" "$tmp/gd2.err"
ok $? "... and took over from it at term 3" || sed 's/^/# /' "$tmp/gd2.err"
check "4 tasks, the primary killed twice mid-loop" 4
wait "$gd0" "$gd1" 2>/dev/null
kill "$gd2"; wait "$gd2" 2>/dev/null

# 3. fencing: the primary stopped until its standby took over, then continued
rm -f "$tmp"/j? "$tmp/err"
base=$((base + 3000))
start 0
start 1 --standby-of 0
export GIMPI_GROUPD="$(ep 0),$(ep 1)"
tasks 4 300 100
for ((i = 0; i < 6000; i++)); do [ -e "$RESTART_MARK.100" ] && break; sleep 0.01; done
kill -STOP "$gd0"
waitfor "$tmp/gd1.err" "took over"
ok $? "a stopped primary: its standby took over within 60 s" || sed 's/^/# /' "$tmp/gd1.err"
kill -CONT "$gd0"
timeout 30 tail --pid="$gd0" -f /dev/null
wait "$gd0"; rc=$?
[ "$rc" = 4 ] && grep -q "fenced by term 2" "$tmp/gd0.err"
ok $? "continued, it exits 4: $(grep -o 'fenced by.*' "$tmp/gd0.err" | head -1)" || sed 's/^/# /' "$tmp/gd0.err"
[ -s "$tmp/j0" ]
ok $? "... and keeps its journal"
check "4 tasks across the fencing" 4 no
! grep -q "took over" "$tmp/gd0.err" && [ "$(grep -c 'a standby follows' "$tmp/gd0.err")" = 1 ]
ok $? "the fenced primary served nothing after its standby took over" || sed 's/^/# /' "$tmp/gd0.err"
kill "$gd1"; wait "$gd1" 2>/dev/null

# 4. refusals
"$GROUPD" --foreground --endpoint "$(ep 1)" --standby-of "$(ep 0)" >/dev/null 2>"$tmp/e1"
[ $? = 1 ] && grep -q "needs --journal" "$tmp/e1"
ok $? "--standby-of without --journal: exit 1 ($(tail -1 "$tmp/e1"))"
"$GROUPD" --foreground --endpoint "$(ep 0)" --pub-port $((base + 1)) >/dev/null 2>&1 &
nj=$!
timeout 20 "$GROUPD" --foreground --endpoint "$(ep 1)" --journal "$tmp/jx" --standby-of "$(ep 0)" \
    >/dev/null 2>"$tmp/e2"
rc=$?
[ $rc = 1 ] && grep -q "keeps no journal" "$tmp/e2"
ok $? "following a primary without a journal: exit 1 (exit $rc: $(tail -1 "$tmp/e2"))"
kill "$nj"; wait "$nj" 2>/dev/null

# 5. a standby stopped on purpose (the job's end): it tells the primary, which goes on
# alone without a word, and removes its copy of the journal
rm -f "$tmp"/j? "$tmp"/gd?.err
start 0
start 1 --standby-of 0
kill -TERM "$gd1"; wait "$gd1"; rc=$?
[ "$rc" = 0 ] && [ ! -e "$tmp/j1" ] && [ -e "$tmp/j0" ]
ok $? "a following standby stopped by SIGTERM: exit $rc, its journal removed" || sed 's/^/# /' "$tmp/gd1.err"
kill -TERM "$gd0"; wait "$gd0"; rc=$?
[ "$rc" = 0 ] && ! grep -q "going on alone" "$tmp/gd0.err" && [ ! -e "$tmp/j0" ]
ok $? "... its primary said nothing of it (exit $rc, its journal removed at its own stop)" || sed 's/^/# /' "$tmp/gd0.err"
exit $((failed > 0))
