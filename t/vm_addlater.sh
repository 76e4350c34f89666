#!/bin/bash
# t/vm_addlater.sh — a job started on one host that grows: the classic PVM pattern of a
# master that pvm_addhosts a host and spawns there, on two emulated hosts reached by the
# real OpenSSH (t/vmhosts.sh), with no -if.  The job must announce an address the added
# host reaches (not the loopback) for groupd and for its tasks' listeners: with a
# hostfile's '&' host, with a host named by pvm_addhosts only, and with the README's own
# multi-host commands as written (the host names are the test bed's addresses).  The
# error cases fail at once with a message naming the host and the cause, never a hang: a
# program missing on the added host, a host that does not answer, a job that announced
# only the loopback, a host that cannot reach the job's address (pvm_addhosts refuses
# it).  With two networks on the first host the default route's address is announced.  Every run is bounded by timeout(1); nothing sleeps to synchronise.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 2
T="$B/t/vm_task"

# run ARGS...: gimpirun on h0 (bounded), in $VM_DIR/wd, output in $out, status in $rc,
# seconds taken in $took
run() {
    local start
    start=$(date +%s.%N)
    vm_exec 0 env -C "$VM_DIR/wd" GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" \
        GIMPI_PATH="$B/t" timeout -k 5 40 "$RUN" "$@" >"$out" 2>&1
    rc=$?
    took=$(echo "$(date +%s.%N) - $start" | bc)
}
# readme ARGS...: gimpirun as the README writes it (only GIMPI_RSH for the test bed's ssh)
readme() {
    vm_exec 0 env -C "$VM_DIR/wd" GIMPI_RSH="$VM_SSH" timeout -k 5 40 "$RUN" "$@" >"$out" 2>&1
    rc=$?
}
# quiet: no warning, refused connection or unreachable groupd in the output
quiet() { ! grep -qiE 'warning|refused|unavailable|unreachable|connect:|handshake|fingerprint' "$out"; }
mkdir -p "$VM_DIR/wd"

echo "1..14"

# --- a hostfile of this host and a '&' host: pvm_addhosts it, spawn there, an answer
printf '%s\n' "$H0" "&$H1" >"$VM_DIR/hosts.amp"
run -tag -hostfile "$VM_DIR/hosts.amp" -np 1 "$T" addspawn "$H1"
okd $([ $rc = 0 ] && has 'added 1 info' && has "worker $H1"; echo $?) "a '&' host added by pvm_addhosts: the task spawned there answers (no -if)"
okd $(quiet; echo $?) "... and nothing warns: groupd and the master were reachable from it"

# --- a hostfile of this host alone; pvm_addhosts of an address it does not name
printf '%s\n' "$H0" >"$VM_DIR/hosts.one"
run -tag -hostfile "$VM_DIR/hosts.one" -np 1 "$T" addspawn "$H1"
okd $([ $rc = 0 ] && has "worker $H1" && quiet; echo $?) "a host not in the hostfile, added by address: the task spawned there answers, quietly"
run -tag -hostfile "$VM_DIR/hosts.one" -np 1 "$T" grow "$H1"
okd $([ $rc = 0 ] && has 'added 1' && has "worker $H1" && has 'deleted 1' && quiet; echo $?) "... added, used and deleted again (pvm_delhosts)"

# --- the README's multi-host commands, as written ("master": a PVM master that spawns
# its workers by default placement; "spmd": one copy per slot)
cp "$B/examples/pvm_spawn_farm" "$VM_DIR/wd/master"
cp "$B/examples/pvm_master_worker" "$VM_DIR/wd/spmd"
printf '%s\n' "$H0" "$H1" >"$VM_DIR/wd/hosts"
readme -tag -hostfile hosts -np 1 ./master
okd $([ $rc = 0 ] && has '[0] spawn-farm: master' && has ': OK' && quiet; echo $?) "README: gimpirun -tag -hostfile hosts -np 1 ./master (exit $rc)"
readme -tag -hostfile hosts ./spmd
okd $([ $rc = 0 ] && has 'master-worker: 2 tasks' && [ "$(grep -c 'OK$' "$out")" = 1 ]; echo $?) "README: gimpirun -tag -hostfile hosts ./spmd (exit $rc)"
printf '%s\n' "$H0" "&$H1" >"$VM_DIR/wd/hosts"
readme -tag -hostfile hosts -np 1 ./master
okd $([ $rc = 0 ] && has ': OK' && quiet; echo $?) "README's master with the other host as '&' (exit $rc)"

# --- errors: at once, naming the host and the cause, no hang
run -tag -hostfile "$VM_DIR/hosts.amp" -np 1 "$T" addspawn "$H1" tid gimpi_no_such_prog
okd $([ $rc = 0 ] && has "no program gimpi_no_such_prog on host $H1" && has 'slot -7'; echo $?) "a program missing on the added host: PvmNoFile, naming the host ($took s)"
run -tag -hostfile "$VM_DIR/hosts.one" -np 1 "$T" addspawn "$VM_NET.99"
okd $([ $rc = 0 ] && has "host $VM_NET.99" && has 'info -29' && has 'slot -6' \
      && [ "$(echo "$took < 20" | bc)" = 1 ]; echo $?) "a host that does not answer: PvmCantStart, then PvmNoHost for the spawn, in $took s"
run -tag -H localhost -np 1 "$T" addspawn "$H1"
okd $([ $rc = 0 ] && has 'info -29' && has "announced only the loopback address 127.0.0.1, which host $H1 cannot reach" && has 'slot -6'; echo $?) "a job of 'localhost' alone stays on the loopback: pvm_addhosts refuses another host, saying why"
run -tag -hostfile "$VM_DIR/hosts.one" -np 1 "$T" config
okd $([ $rc = 0 ] && has 'hosts 1 narch 1'; echo $?) "a job of one host that never grows runs as before"

# --- a job whose announced address reaches something else from the added host: here
# both hosts hold $VM_NET.200 on their loopback, and the job announces it (-host)
ip -n "${VM_NS[0]}" addr add "$VM_NET.200/32" dev lo &&
ip -n "${VM_NS[1]}" addr add "$VM_NET.200/32" dev lo || vm_bail "cannot add $VM_NET.200"
run -tag -host "$VM_NET.200" -hostfile "$VM_DIR/hosts.one" -np 1 "$T" addspawn "$H1" any
okd $([ $rc = 0 ] && has 'info -29' && has "host $H1 cannot reach this job at $VM_NET.200" && has 'slot -6'; echo $?) "a host that cannot reach the job's address: pvm_addhosts refuses it, saying so ($took s)"
okd $(! has 'worker' && ! has 'recv'; echo $?) "... and no task is spawned there to wait for"

# --- two networks on h0: another interface (a veth inside h0, likely listed before eth0)
# whose network h1 cannot reach, and a default route through eth0: the job announces the
# default route's address and grows as before
ip -n "${VM_NS[0]}" link add gx0 type veth peer name gx1 &&
ip -n "${VM_NS[0]}" addr add 10.77.0.1/24 dev gx0 && ip -n "${VM_NS[0]}" link set gx0 up &&
ip -n "${VM_NS[0]}" link set gx1 up && ip -n "${VM_NS[0]}" route add default dev eth0 ||
    vm_bail "cannot give h0 a second network"
run -tag -hostfile "$VM_DIR/hosts.one" -np 1 "$T" addspawn "$H1"
okd $([ $rc = 0 ] && has "worker $H1" && quiet; echo $?) "two networks: the default route's address is announced, the added host's task answers"
exit $((failed > 0))
