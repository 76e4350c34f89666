#!/bin/bash
# t/groupd_quiet_put.sh — a message-box put sent without a reply to a groupd that dies
# before reading it is not lost (doc/reliability.md §2): a task from the shell (a groupd
# started on first use, with its journal) puts "q" = 1, the test stops groupd (SIGSTOP),
# the task puts "q" = 2 (the same size at its own index: MBOX_PUTQ, no reply), the test
# kills the stopped groupd, and the task's next call restarts it from the journal and
# sends its requests in flight again: another task then reads "q" = 2 from groupd.  (The reconnection's HELLO once
# counted as the end of the quiet requests sent before it, which were then dropped.)
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
TASK="$top_builddir/t/mbox_quiet_restart"
export GIMPI_GROUPD="ipc://$tmp/gd/groupd" GIMPI_GROUPD_BIN="$top_builddir/groupd/groupd"
LOCK="$tmp/gd/groupd.lock"
mkdir -m 700 "$tmp/gd"
waitfor() { for _ in $(seq 1 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
echo "1..2"
mkfifo "$tmp/in"
timeout 60 "$TASK" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
task=$!
exec 3>"$tmp/in"
pid=
waitfor "$tmp/out" '^put1' && pid=$(cat "$LOCK" 2>/dev/null) && [ -n "$pid" ] && kill -STOP "$pid" \
    && echo go >&3 && waitfor "$tmp/out" '^put2' && kill -KILL "$pid" && kill -CONT "$pid" 2>/dev/null
ok $? "groupd (pid ${pid:-none}) stopped before the quiet put, killed after it" || sed 's/^/# /' "$tmp/out" "$tmp/err"
echo go >&3
waitfor "$tmp/out" '^done'
timeout 60 "$TASK" read >"$tmp/read" 2>>"$tmp/err"; rc=$?
echo go >&3
exec 3>&-
wait "$task"
[ "$rc" = 0 ] && grep -q "^got 2" "$tmp/read"
ok $? "another task reads it from the restarted groupd: $(grep '^got' "$tmp/read") (exit $rc)" || sed 's/^/# /' "$tmp/out" "$tmp/read" "$tmp/err" | head
pid=$(cat "$LOCK" 2>/dev/null); [ -n "$pid" ] && kill "$pid" 2>/dev/null
exit $((failed > 0))
