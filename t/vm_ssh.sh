#!/bin/bash
# t/vm_ssh.sh — the virtual machine across hosts started through the real OpenSSH: three
# emulated hosts (network namespaces on a bridge, t/vmhosts.sh), each with its own sshd and
# a key the test made.  gimpirun runs on h0 and reaches the others with GIMPI_RSH="ssh -F
# <config>" (BatchMode, verified host keys).  A hostfile puts tasks on every host;
# t/vm_task checks pvm_config, pvm_tasks, pvm_spawn by default placement (each worker
# listed with its spawner as ti_ptid), by host and by architecture,
# pvm_addhosts/pvm_delhosts during a job, group operations across the hosts, a killed
# master whose workers on every host (and the children they spawned beside them) end within
# -grace + 2 s, a core of its own for each task on another host (or none with
# GIMPI_BIND=none), a program missing on one host, a host whose link breaks in the middle
# of a barrier, and strangers: a task with another key, an ssh key that the hosts do not
# accept.  Every wait is bounded (timeout); nothing sleeps to synchronise.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 3
T="$B/t/vm_task"
printf '%s\n' "$H0" "$H1" "$H2" >"$VM_DIR/hosts"

# run ARGS...: gimpirun on h0 (bounded), output in $out, status in $rc
run() {
    vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
        timeout -k 10 90 "$RUN" "$@" >"$out" 2>&1
    rc=$?
}

echo "1..39"

# --- a job on every host
run -tag -hostfile "$VM_DIR/hosts" -np 3 "$T" config
okd $([ $rc = 0 ] && [ "$(count 'hosts 3 narch 1')" = 3 ]; echo $?) "hostfile: a task on each of 3 hosts sees 3 hosts"
ok $([ "$(count "host $H1 LINUX64 1000")" = 3 ]; echo $?) "pvm_config names every host with its architecture and speed"
ok $(has "[2] hosts 3"; echo $?) "remote output comes back with the -tag prefix"
ok $(! has "key fingerprint"; echo $?) "a run that went well prints no groupd key fingerprint line"

# --- a core of its own for each task on another host too: the agent plans its host's
# cores as gimpirun does here (in a runtime directory of its own, through dx=: other
# tests' jobs on this machine hold claims in the shared one)
mkdir -m 700 "$VM_DIR/rd1"
printf '#!/bin/sh\nXDG_RUNTIME_DIR=%s exec %s "$@"\n' "$VM_DIR/rd1" "$B/programs/gimpi-agent" \
    >"$VM_DIR/agent-rd1"
chmod +x "$VM_DIR/agent-rd1"
printf '%s\n' "$H0" "$H1 slots=2 dx=$VM_DIR/agent-rd1" >"$VM_DIR/hosts.bind"
run -tag -hostfile "$VM_DIR/hosts.bind" -np 3 "$B/t/job_task" cpus
c1=$(sed -n 's/^\[1\] cpus 1 on \([0-9]*\) bound \1,.*/\1/p' "$out")
c2=$(sed -n 's/^\[2\] cpus 1 on \([0-9]*\) bound \1,.*/\1/p' "$out")
okd $([ $rc = 0 ] && [ -n "$c1" ] && [ -n "$c2" ] && [ "$c1" != "$c2" ]; echo $?) "two tasks on another host: each bound to a core of its own by the agent ($c1, $c2)"
GIMPI_BIND=none run -tag -hostfile "$VM_DIR/hosts.bind" -np 3 "$B/t/job_task" cpus
okd $([ $rc = 0 ] && [ "$(grep -c '^\[[12]\] cpus [0-9]* on [0-9]* bound -$' "$out")" = 2 ]; echo $?) "GIMPI_BIND=none at the launcher: the agent binds none"

run -hostfile "$VM_DIR/hosts" -np 6 "$T" group 6
okd $([ $rc = 0 ] && [ "$(count 'group ok')" = 6 ]; echo $?) "barrier, bcast and reduce over 6 tasks on 3 hosts"

run -hostfile "$VM_DIR/hosts" -np 3 "$T" tasks
okd $([ $rc = 0 ] && [ "$(count 'mine OK')" = 3 ]; echo $?) "pvm_tasks lists each task with its tid, pid, host and program"
ok $([ "$(count 'on my host OK')" = 3 ]; echo $?) "pvm_tasks of one host"

# --- pvm_spawn
run -hostfile "$VM_DIR/hosts" -np 1 "$T" spawn 6
okd $([ $rc = 0 ] && has 'spawned 6'; echo $?) "pvm_spawn by default placement starts 6"
ok $([ "$(count "worker $H0")" = 2 ] && [ "$(count "worker $H1")" = 2 ] && [ "$(count "worker $H2")" = 2 ]; echo $?) "round-robin: two workers on each host, each answering its parent"
ok $(! has 'unknown tid'; echo $?) "pvm_spawn returned the tids the workers have"
ok $([ "$(count 'ptid parent')" = 6 ]; echo $?) "pvm_tasks gives each worker, on every host, its spawner as ti_ptid"

run -hostfile "$VM_DIR/hosts" -np 1 "$T" spawn 2 "$H2"
okd $([ $rc = 0 ] && [ "$(count "worker $H2")" = 2 ]; echo $?) "pvm_spawn with where: both on that host"

run -hostfile "$VM_DIR/hosts" -np 1 "$T" spawn 2 192.0.2.250
okd $([ $rc = 0 ] && [ "$(count 'slot -6')" = 2 ]; echo $?) "a host not in the virtual machine: PvmNoHost in each slot"

run -hostfile "$VM_DIR/hosts" -np 1 "$T" spawnarch 3 LINUX64
okd $([ $rc = 0 ] && has 'spawned 3'; echo $?) "PvmTaskArch LINUX64 starts on the hosts of that architecture"
run -hostfile "$VM_DIR/hosts" -np 1 "$T" spawnarch 2 SUN4
okd $([ "$(count 'slot -6')" = 2 ]; echo $?) "an architecture no host has: PvmNoHost"

# --- hosts added and deleted during the job; the hostfile's '&' line keeps its options
printf '%s\n' "$H0" "$H1" "&$H2 sp=2000" >"$VM_DIR/hosts.later"
run -hostfile "$VM_DIR/hosts.later" -np 1 "$T" grow "$H2"
okd $([ $rc = 0 ] && has 'added 1' && has 'hosts 3'; echo $?) "pvm_addhosts starts a host's agent during the job"
ok $(has "worker $H2"; echo $?) "a task spawned onto the added host answers"
ok $(has 'deleted 1' && [ "$(grep -c '^hosts 2' "$out")" = 1 ]; echo $?) "pvm_delhosts takes it out of pvm_config"
ok $(has 'mstat -6'; echo $?) "pvm_mstat of the deleted host: PvmNoHost"
run -hostfile "$VM_DIR/hosts.later" -np 1 "$T" notify "$H2"
okd $([ $rc = 0 ] && has 'added 1' && has 'hostadd 1 same'; echo $?) "pvm_notify PvmHostAdd: count 1 and the new host's dtid, from t80000000"
ok $(has 'deleted 1' && has 'taskexit OK'; echo $?) "PvmTaskExit of a task on the deleted host: its tid"
ok $(has 'hostdelete OK'; echo $?) "PvmHostDelete of the deleted host: its dtid"

# --- pvm_kill of a task on another host; wd=; groupd on another host
run -hostfile "$VM_DIR/hosts" -np 1 "$T" remotekill "$H1"
okd $([ $rc = 0 ] && has 'kill 0' && has 'gone'; echo $?) "pvm_kill of a task on another host ends it (pvm_pstat: PvmNoTask)"
mkdir -p "$VM_DIR/wd1"
printf '%s\n' "$H0" "$H1 wd=$VM_DIR/wd1" >"$VM_DIR/hosts.wd"
run -tag -hostfile "$VM_DIR/hosts.wd" -np 2 "$T" pwd
okd $([ $rc = 0 ] && has "[1] pwd $VM_DIR/wd1"; echo $?) "wd= sets a host's working directory"
run -groupd "$H2" -hostfile "$VM_DIR/hosts" -np 3 "$T" group 3
okd $([ $rc = 0 ] && [ "$(count 'group ok')" = 3 ]; echo $?) "-groupd HOST: the job's groupd runs on another host"
ok $(! ip netns pids "${VM_NS[2]}" | xargs -r ps -o comm= -p | grep -q groupd; echo $?) "... and ends with the job"

# --- a killed master: its workers on every host, and theirs spawned beside them, end
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout -k 10 90 "$RUN" -grace 3 -hostfile "$VM_DIR/hosts" -np 1 "$B/t/grace_task" \
    master 3 grandhere hang >"$out" 2>&1 &
job=$!
for _ in $(seq 1 600); do has ready && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
pids=$(sed -n 's/^worker tid t[0-9a-f]* pid //p' "$out")
start=$(date +%s.%N)
kill -9 "$(sed -n 's/^master pid //p' "$out")"
wait $job
rc=$?
took=$(echo "$(date +%s.%N) - $start" | bc)
# the agents end what is left on their hosts (SIGTERM, SIGKILL 2 s later); a worker
# built with the sanitizers takes a while to exit, so allow the agents those 2 s and more
left=0
for _ in $(seq 1 100); do
    left=0
    for p in $pids; do kill -0 "$p" 2>/dev/null && left=$((left + 1)); done
    [ $left = 0 ] && break
    sleep 0.1
done
okd $([ "$(echo "$pids" | wc -w)" = 6 ] && [ $rc = 1 ] && [ "$(echo "$took <= 5" | bc)" = 1 ]; echo $?) "a killed master: 6 workers on 3 hosts ended in $took s (-grace 3, exit $rc)"
ok $([ $left = 0 ]; echo $?) "... none of them is left within 10 s of gimpirun's exit ($left)"

# --- a program missing on one host
printf '%s\n' "$H0" "$H1 ep=/nonexistent" "$H2" >"$VM_DIR/hosts.ep"
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" PATH=/usr/bin:/bin \
    GIMPI_PATH="$B/t" timeout 60 "$RUN" -hostfile "$VM_DIR/hosts.ep" -np 3 vm_task config >"$out" 2>&1
rc=$?
okd $([ $rc != 0 ] && has "no program vm_task on host $H1"; echo $?) "a program missing on one host: the job fails naming the host"

# --- strangers: another ssh key, another gimpi key
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts.2"
ssh-keygen -q -t ed25519 -N '' -f "$VM_DIR/stranger" >/dev/null
sed "s|^\( *IdentityFile\) .*|\1 $VM_DIR/stranger|" "$VM_SSH_CONFIG" >"$VM_DIR/ssh_config.stranger"
vm_exec 0 env GIMPI_RSH="ssh -F $VM_DIR/ssh_config.stranger" \
    GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout 60 "$RUN" -hostfile "$VM_DIR/hosts.2" -np 2 "$T" config >"$out" 2>&1
rc=$?
okd $([ $rc != 0 ] && has "host $H1" && has "Permission denied"; echo $?) "an ssh key the host refuses: the job fails, naming the host and ssh's reason"

GPORT=$((17000 + $$ % 4000))
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout -k 10 90 "$RUN" -gport $GPORT -hostfile "$VM_DIR/hosts" -np 3 "$T" wait >"$out" 2>&1 &
job=$!
for _ in $(seq 1 300); do [ "$(count ready)" = 3 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
okd $([ "$(count ready)" = 3 ]; echo $?) "a job with groupd pinned at -gport $GPORT runs"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$VM_DIR/otherkey"; echo >>"$VM_DIR/otherkey"
chmod 600 "$VM_DIR/otherkey"
vm_exec 2 env GIMPI_GROUPD="tcp://$H0:$GPORT" GIMPI_KEY_FILE="$VM_DIR/otherkey" GIMPI_HOST_ADDR="$H2" \
    timeout 30 "$T" config >"$VM_DIR/stranger.out" 2>&1
src=$?
ok $(grep -q 'refused us: not the same key' "$VM_DIR/stranger.out" && ! grep -q "host $H1" "$VM_DIR/stranger.out"; echo $?) "a task with another key is refused by the job's groupd and sees none of its hosts"
vm_exec 2 env GIMPI_GROUPD="tcp://$H0:$GPORT" GIMPI_KEY_FILE="$VM_DIR/otherkey" \
    "$B/programs/gimpi-stat" >"$VM_DIR/stranger.out" 2>&1
ok $([ $? != 0 ]; echo $?) "gimpi-stat with another key reads nothing"
# the console's halt of a job of three hosts: every task ends, groupd with them, exit 0
vm_exec 0 env GIMPI_GROUPD="tcp://$H0:$GPORT" timeout 60 "$B/programs/gimpi" halt \
    >"$VM_DIR/halt.out" 2>&1
hrc=$?
ok $([ $hrc = 0 ] && [ ! -s "$VM_DIR/halt.out" ]; echo $?) "gimpi -e tcp://H:P halt of a job on 3 hosts: exit $hrc, nothing printed" ||
    sed 's/^/# /' "$VM_DIR/halt.out"
timeout 30 tail --pid=$job -f /dev/null
ok $(! kill -0 $job 2>/dev/null; echo $?) "... and the job ends"
pkill -TERM -f "vm_task wait" 2>/dev/null
wait $job

# --- a host whose link breaks in the middle of a barrier
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    GIMPI_LINK_TIMEOUT=4 timeout -k 10 90 "$RUN" -grace 10 -hostfile "$VM_DIR/hosts" -np 3 "$T" hold 3 "$H2" >"$out" 2>&1 &
job=$!
for _ in $(seq 1 300); do [ "$(count 'held 0')" = 3 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
start=$(date +%s)
vm_link_down 2
for _ in $(seq 1 400); do [ "$(count 'barrier error')" = 2 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
took=$(( $(date +%s) - start ))
okd $([ "$(count 'barrier error')" = 2 ] && [ $took -le 20 ]; echo $?) "link down mid-barrier: both survivors get an error, in ${took} s (bound 20 s)"
wait $job
rc=$?
okd $([ $rc != 0 ] && has "host $H2 is gone"; echo $?) "gimpirun ends, naming the lost host"
vm_link_up 2
