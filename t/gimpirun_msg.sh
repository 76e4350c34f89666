#!/bin/bash
# t/gimpirun_msg.sh — real messages in jobs started by gimpirun: a ring and an all-to-all
# (every task sends before it receives) in single-client jobs, with a tiny packet length
# and ackmark = hiwater = 1, a two-client job through impi-server exchanging messages
# both ways, and a task that dies: the others get an error at once, gimpirun names the
# dead task and exits 1 — nothing hangs (every run is bounded by timeout).
set -u
top_builddir=${top_builddir:-.}
SERVER="$top_builddir/programs/impi-server"
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_msg"
. "${top_srcdir:-.}/t/tap.sh"
# job NAME WANT_OK_LINES ARGS...: runs gimpirun, checks exit 0 and the number of ok lines
job() {
    local name=$1 want=$2; shift 2
    timeout 120 "$RUN" "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? got
    got=$(grep -c " ok$" "$tmp/out")
    if [ $rc = 0 ] && [ "$got" = "$want" ]; then ok 0 "$name"; else
        ok 1 "$name (exit $rc, $got of $want ok lines)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
echo "1..12"
job "4-task ring" 4 -np 4 "$TASK" ring 1000
job "3-task all-to-all of 1 MiB, every task sends first" 3 -np 3 "$TASK" alltoall 1048576
job "all-to-all with 16-byte packets and ackmark = hiwater = 1" 3 -datalen 16 -ackmark 1 -hiwater 1 -np 3 "$TASK" alltoall 5000
job "one-task job" 1 -np 1 "$TASK" ring 10

# two clients, one server
mkfifo "$tmp/srv"
timeout 120 "$SERVER" -server 2 -host 127.0.0.1 >"$tmp/srv" 2>"$tmp/srv.err" &
srv=$!
exec 3<"$tmp/srv"
read -r -t 20 addr <&3
timeout 120 "$RUN" -client 1 "$addr" -np 2 "$TASK" alltoall 300000 >"$tmp/c1" 2>&1 &
c1=$!
timeout 120 "$RUN" -client 0 "$addr" -np 2 "$TASK" alltoall 300000 >"$tmp/c0" 2>&1
r0=$?
wait $c1; r1=$?
[ $r0 = 0 ] && [ $r1 = 0 ] && [ "$(cat "$tmp/c0" "$tmp/c1" | grep -c 'of 4: alltoall ok')" = 4 ]
ok $? "two clients exchange 300 kB messages both ways" || sed 's/^/# /' "$tmp/c0" "$tmp/c1"
wait $srv; ok $? "impi-server exits 0 after both FINIs"
exec 3<&-

# six clients: more masters than MAXLINEAR (4), so the world barrier of every task's
# finalize runs IMPI's tree among the masters
mkfifo "$tmp/srv6"
timeout 120 "$SERVER" -server 6 -host 127.0.0.1 >"$tmp/srv6" 2>"$tmp/srv6.err" &
srv=$!
exec 3<"$tmp/srv6"
read -r -t 20 addr <&3
pids=""
for c in 0 1 2 3 4 5; do
    timeout 120 "$RUN" -client $c "$addr" -np $((c % 2 + 1)) "$TASK" ring 5000 >"$tmp/s$c" 2>&1 &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait $p || rc=1; done
[ $rc = 0 ] && [ "$(cat "$tmp"/s? | grep -c 'of 9: ring ok')" = 9 ]
ok $? "six clients, nine tasks: ring and the tree world barrier" || cat "$tmp"/s? | sed 's/^/# /' | head
wait $srv; ok $? "impi-server exits 0 after six FINIs"
exec 3<&-

# a task that dies
start=$(date +%s)
timeout 120 "$RUN" -grace 20 -np 3 "$TASK" die 1 >"$tmp/out" 2>"$tmp/err"
rc=$?
el=$(( $(date +%s) - start ))
ok $([ $rc = 1 ] && echo 0 || echo 1) "a dead task fails the job (exit $rc)"
grep -q "task 1 (.*) exited with status 3" "$tmp/err"; ok $? "gimpirun names the dead task"
[ "$(grep -c 'saw error -' "$tmp/out")" = 2 ]; ok $? "both others got an error from their receive" || sed 's/^/# /' "$tmp/out" "$tmp/err"
[ $el -lt 20 ]; ok $? "they noticed at once, not after the grace period (${el}s)"
exit $((failed > 0))
