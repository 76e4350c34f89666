#!/bin/bash
# t/live_view_vm.sh — the live view of a job that spans hosts: two emulated hosts reached
# by the real OpenSSH (t/vmhosts.sh), a gimpirun job on both whose two tasks deadlock (each
# receives from the other, t/live_view_task deadlock).  From "another terminal" on h0 (the
# job's runtime directory, no endpoint given) gimpi-stat --tasks and the console's top
# find the job's tcp groupd and show both tasks, each on its host, each blocked in its
# pvm_recv from the other, and name the deadlock; the console's halt then ends the job.  Every wait
# is bounded; the view is polled, nothing sleeps to synchronise.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 2
RD="$VM_DIR/rd"
mkdir -m 700 "$RD"
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts"
view="$VM_DIR/view"

# on0 PROGRAM ARGS...: a program on h0, as from another terminal of the job's user
on0() {
    vm_exec 0 env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$@"
}

echo "1..6"

vm_exec 0 env XDG_RUNTIME_DIR="$RD" GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" \
    GIMPI_PATH="$B/t" timeout -k 10 120 "$RUN" -hostfile "$VM_DIR/hosts" -np 2 \
    "$B/t/live_view_task" deadlock >"$out" 2>&1 &
job=$!
for _ in $(seq 1 300); do [ "$(count ready)" = 2 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
t0=$(sed -n 's/^ready t//p' "$out" | sed -n 1p)
t1=$(sed -n 's/^ready t//p' "$out" | sed -n 2p)
okd $([ -n "$t0" ] && [ -n "$t1" ]; echo $?) "a job of two tasks on two hosts runs: t$t0 t$t1"

# asks until both tasks show blocked (at most 15 s)
for _ in $(seq 1 150); do
    on0 "$B/programs/gimpi-stat" --tasks >"$view" 2>&1
    [ "$(grep -c ' has been in pvm_recv(t' "$view")" = 2 ] && break
    sleep 0.1
done
ok $(grep -q "^t$t0 has been in pvm_recv(t$t1, tag [78]) for .*; t$t1 is blocked too, in pvm_recv(t$t0, tag [78]): a deadlock, t$t0 -> t$t1 -> t$t0$" "$view" &&
     grep -q "^t$t1 has been in pvm_recv(t$t0, tag [78]) for .*; t$t0 is blocked too, in pvm_recv(t$t1, tag [78]): a deadlock, t$t1 -> t$t0 -> t$t1$" "$view"; echo $?) \
    "gimpi-stat --tasks, with no endpoint: each task in its pvm_recv from the other: a deadlock" ||
    sed 's/^/# /' "$view"
ok $(grep -Eq "^t[0-9a-f]+ +$H0 " "$view" && grep -Eq "^t[0-9a-f]+ +$H1 " "$view" &&
     head -1 "$view" | grep -q '^2 tasks, 2 blocked (groupd at tcp://'; echo $?) \
    "one task on each host, both blocked, asked of the job's tcp groupd" ||
    sed 's/^/# /' "$view"
on0 "$B/programs/gimpi" top >"$view" 2>&1
ok $([ "$(grep -c ' has been in pvm_recv(t' "$view")" = 2 ]; echo $?) "the console's top shows both" ||
    sed 's/^/# /' "$view"
on0 "$B/programs/gimpi" halt >"$view" 2>&1
ok $? "the console's halt ends the job" || sed 's/^/# /' "$view"
timeout 30 tail --pid=$job -f /dev/null
ok $? "gimpirun has ended"
exit $((failed > 0))
