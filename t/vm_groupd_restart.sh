#!/bin/bash
# t/vm_groupd_restart.sh — a job on several hosts outlives its groupd (doc/reliability.md):
# gimpirun starts its tcp groupd with a journal in its private runtime directory, watches
# it, and when it dies starts it again at once, at the same ports, from the journal
# (--restart); the tasks on every host reconnect (GIMPI_GROUPD_RESTARTABLE) and send their
# requests in flight again.  This is the path of a job without a standby groupd
# (-groupd-standby none; t/vm_failover_*.sh test the standby).  Two emulated hosts (t/vmhosts.sh, real OpenSSH); tasks of
# t/groupd_restart_task loop over join, barrier, bcast, reduce, gsize, gettid, the message
# box and leave (a pvm_spawn every 100 rounds); instance 0 creates a mark file at the
# rounds named (250 and 700) and the test then kills the job's groupd with SIGKILL
# (events, not sleeps); the spawns after the first kill go through the manager that
# gimpirun made anew, and their children's exits come by pvm_notify.
# Checked: every task ends "ok" (no call failed, every sum right), the job exits 0,
# gimpirun said it restarted groupd, and the longest call of any task is printed and
# under STALL_MAX_MS.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 2
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts"
STALL_MAX_MS=${STALL_MAX_MS:-2000}
export RESTART_MARK="$VM_DIR/mark" PVM_EXPORT=RESTART_MARK     # (to the tasks on every host)

# wait_file FILE: waits (bounded, 60 s) for FILE to appear; false when it did not
wait_file() {
    local i
    for ((i = 0; i < 6000; i++)); do [ -e "$1" ] && return 0; sleep 0.01; done
    return 1
}
# descendants PID: every process under PID
descendants() {
    local c
    for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done
}
# groupd_of PID: the groupd among PID's descendants (the job's, gimpirun's child)
groupd_of() {
    local p
    for p in $(descendants "$1"); do
        case "$(cat /proc/"$p"/comm 2>/dev/null)" in *groupd) true ;; *) false ;; esac && { echo "$p"; return 0; }
    done
    return 1
}

echo "1..7"
rm -f "$RESTART_MARK".*
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout -k 10 120 "$RUN" -hostfile "$VM_DIR/hosts" -groupd-standby none -np 4 "$B/t/groupd_restart_task" 4 1000 250,700 \
    >"$out" 2>"$tmp/err" &
job=$!
# at each mark, kill -9 the job's groupd; the second kill only once another one serves
killed=
for m in 250 700; do
    wait_file "$RESTART_MARK.$m" || break
    pid=$(groupd_of $job) || pid=
    for ((i = 0; i < 6000; i++)); do
        [ -n "$pid" ] && { [ -z "$killed" ] || ! grep -qw "$pid" <<<"$killed"; } && break
        sleep 0.01; pid=$(groupd_of $job) || pid=
    done
    [ -n "$pid" ] && kill -9 "$pid" && killed="$killed $pid"
done
wait $job
rc=$?
got=$(grep -c " ok rounds=" "$out")
[ "$(wc -w <<<"$killed")" = 2 ] && [ "$rc" = 0 ] && [ "$got" = 4 ] && ! grep -q FAIL "$out"
ok $? "4 tasks on 2 hosts, groupd killed twice mid-loop (pids${killed:- none}): $got of 4 end ok, exit $rc" \
    || sed 's/^/# /' "$out" "$tmp/err" | head -40
[ "$(grep -c "groupd ended (signal 9); restarted from its journal at tcp://.* in [0-9]* ms" "$tmp/err")" = 2 ] \
    && [ "$(grep -o 'at tcp://[^ ]*' "$tmp/err" | sort -u | wc -l)" = 1 ]
ok $? "gimpirun restarted the job's groupd twice at once, at the same endpoint ($(grep -o 'in [0-9]* ms' "$tmp/err" | tr '\n' ' '))" \
    || sed 's/^/# /' "$tmp/err" | head -20
stall=$(sed -n 's/.*stall_ms=\([0-9.]*\).*/\1/p' "$out" | sort -n | tail -1)
echo "# longest call of any task: ${stall:-?} ms ($(sed -n 's/.*stall_ms=[0-9.]* (\(.*\))/\1/p' "$out" | sort | uniq -c | tr '\n' ' '))"
awk -v s="${stall:-99999}" -v m="$STALL_MAX_MS" 'BEGIN { exit !(s <= m) }'
ok $? "longest call ${stall:-?} ms <= $STALL_MAX_MS ms"
# a groupd ended on purpose (SIGTERM: it removes its journal) is not restarted: the
# tasks' calls fail after the outage budget (1 s here) and gimpirun says it ended (a task
# whose peer failed first may wait for its message for ever, as in PVM: the job is then
# ended by the timeout, 20 s)
rm -f "$RESTART_MARK".*
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    GIMPI_GROUPD_OUTAGE_MS=1000 \
    timeout -k 5 20 "$RUN" -hostfile "$VM_DIR/hosts" -groupd-standby none -np 2 "$B/t/groupd_restart_task" 2 1000 100 \
    >"$out" 2>"$tmp/err" &
job=$!
pid=
wait_file "$RESTART_MARK.100" && pid=$(groupd_of $job) && kill -TERM "$pid"
wait $job
rc=$?
[ -n "$pid" ] && [ "$rc" != 0 ] && grep -q FAIL "$out"
ok $? "groupd ended with SIGTERM mid-loop: the tasks' calls fail (exit $rc)" || sed 's/^/# /' "$out" "$tmp/err" | head -20
grep -q "the job's groupd ended while the job runs" "$tmp/err" && ! grep -q "restarted from its journal" "$tmp/err"
ok $? "... gimpirun says it ended, and does not restart it" || sed 's/^/# /' "$tmp/err" | head -20
# the job's groupd on the other host (-groupd, with -gport: its ports fixed), started and
# restarted by that host's agent, its journal in that host's private runtime directory
GPORT=47311
rm -f "$RESTART_MARK".*
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout -k 10 120 "$RUN" -hostfile "$VM_DIR/hosts" -groupd-standby none -groupd "$H1" -gport $GPORT -np 4 \
    "$B/t/groupd_restart_task" 4 600 250 >"$out" 2>"$tmp/err" &
job=$!
pid=
wait_file "$RESTART_MARK.250" \
    && pid=$(vm_exec 1 ss -ltnpH "sport = :$GPORT" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1) \
    && [ -n "$pid" ] && kill -9 "$pid"
wait $job
rc=$?
got=$(grep -c " ok rounds=" "$out")
[ -n "$pid" ] && [ "$rc" = 0 ] && [ "$got" = 4 ] && ! grep -q FAIL "$out"
ok $? "-groupd $H1 -gport $GPORT: groupd (pid ${pid:-none}) killed there: $got of 4 end ok, exit $rc" \
    || sed 's/^/# /' "$out" "$tmp/err" | head -30
grep -q "groupd ended (signal 9); restarted from its journal at tcp://$H1:$GPORT in [0-9]* ms" "$tmp/err"
ok $? "... restarted there by its agent at the same port ($(grep -o 'in [0-9]* ms' "$tmp/err"); longest call $(sed -n 's/.*stall_ms=\([0-9.]*\).*/\1/p' "$out" | sort -n | tail -1) ms)" \
    || sed 's/^/# /' "$tmp/err" | head -20
exit $((failed > 0))
