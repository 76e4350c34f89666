# t/slurm.sh — a library that shell tests source (after t/tap.sh and t/vmhosts.sh) to run
# a real Slurm of their own, as root, with every file in a temporary directory: munged on
# a private socket and key, slurmctld in a controller namespace "ctl" (198.51.100.2) on the
# bridge of t/vmhosts.sh, and one slurmd per emulated host, each in its host's namespace at
# its address and named as the host, so the steps of a job run on different "hosts" (their
# own address and hostname).  Hosts made by slurm_up are named n0, n1, ...; after vm_up
# they keep their names h0, h1, ... (sshd and Slurm on the same hosts).  Every daemon is in a network namespace of its own, so the fixed ports
# 6817/6818 cannot clash with anything else on the machine.  The client commands (salloc,
# srun, sbatch, sinfo, squeue, scancel) must run where they reach the controller: in the
# controller's namespace (the "login node", slurm_run) or on a node (vm_exec).
#
#   slurm_up N     N nodes (makes hosts n0..n(N-1) with vm_net_up unless vm_up/vm_net_up
#                  already made at least N; then the nodes are those hosts), returns when sinfo shows
#                  every node idle; exports SLURM_CONF, SLURM_DIR, SLURM_NODES ("n0,n1,…"),
#                  SLURM_LOGIN (a command prefix entering the controller's namespace)
#   slurm_run CMD… runs CMD on the login node (the controller's namespace, hostname ctl)
#   slurm_down     stops the daemons (put in front of the EXIT trap by slurm_up)
# slurm_up prints "1..0 # SKIP reason" and exits 0 when a piece of Slurm is missing or a
# daemon refuses to run here; the reason names the daemon and its last error line.
#
# Slurm 22.05 places a job step on all of the job's CPUs on its nodes unless told
# otherwise, so a second step waits for the first.  A launcher that starts a step later on
# one chosen node while other steps run uses
#     srun --overlap --nodes=1 --ntasks=1 --nodelist=nI CMD
# (--overlap lets the step share the CPUs of running steps, even of steps that did not
# ask for it); stdin reaches task 0 of the step (srun's default --input=0).

SLURM_DIR=""
SLURM_NODES=""
SLURM_LOGIN=""
SLURM_CTL_ADDR=198.51.100.2

# slurm_run CMD...: runs CMD on the login node (the controller's namespace).
slurm_run() { vm_ns_exec "$VM_PREFIX-ctl" "$@"; }

# slurm_why WHO LOG: the reason of a skip: the daemon and the last error line of its log.
slurm_why() {
    local line
    line=$(grep -iE 'error|fatal' "$2" 2>/dev/null | tail -n 1)
    [ -n "$line" ] || line=$(tail -n 1 "$2" 2>/dev/null)
    echo "$1 refuses to run here: ${line:-no log}"
}

# slurm_conf N: writes slurm.conf (and an empty cgroup.conf) for N nodes into SLURM_DIR.
slurm_conf() {
    local n=$1 i d=$SLURM_DIR
    cat >"$d/slurm.conf" <<EOF
# written by t/slurm.sh for one test run
ClusterName=gimpitest
SlurmctldHost=$SLURM_CTL_NAME($SLURM_CTL_ADDR)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.%n.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
PropagateResourceLimits=NONE
SlurmdParameters=config_overrides
ReturnToService=2
InactiveLimit=0
KillWait=2
MinJobAge=10
MessageTimeout=10
SlurmdTimeout=60
EOF
    for i in $(seq 0 $((n - 1))); do
        echo "NodeName=${VM_HOSTS[$i]} NodeAddr=${VM_ADDRS[$i]} CPUs=2 State=UNKNOWN" >>"$d/slurm.conf"
    done
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$d/slurm.conf"
    : >"$d/cgroup.conf"
}

# slurm_up N: munged, slurmctld and N slurmd; returns when every node is idle.
slurm_up() {
    local n=$1 i p ready states node b
    for b in munged mungekey slurmctld slurmd; do
        [ -x "/usr/sbin/$b" ] || vm_skip "no /usr/sbin/$b (packages munge, slurm-wlm)"
    done
    for b in srun salloc sbatch sinfo; do
        command -v "$b" >/dev/null || vm_skip "no $b (package slurm-client)"
    done
    [ "$VM_N" -gt 0 ] || vm_net_up "$n" n
    [ "$VM_N" -ge "$n" ] || vm_bail "slurm_up $n on $VM_N hosts"
    SLURM_DIR=$VM_DIR/slurm
    mkdir -p "$SLURM_DIR/state" "$SLURM_DIR/spool" && chmod 755 "$SLURM_DIR" || vm_bail "mkdir $SLURM_DIR"
    vm_trap_first slurm_down
    SLURM_CTL_NAME=ctl
    [ "$VM_UTS" = yes ] || SLURM_CTL_NAME=$(hostname -s)
    vm_ns_add "$VM_PREFIX-ctl" "$SLURM_CTL_ADDR" "$SLURM_CTL_NAME" || vm_bail "cannot make the controller's namespace"

    # munge: a key of our own, a socket of our own (munged wants every directory on the
    # socket's path searchable by all, hence the 755)
    mungekey --create --keyfile="$SLURM_DIR/munge.key" 2>"$SLURM_DIR/munged.log" ||
        vm_skip "$(slurm_why mungekey "$SLURM_DIR/munged.log")"
    munged -F --socket="$SLURM_DIR/munge.sock" --key-file="$SLURM_DIR/munge.key" \
        --pid-file="$SLURM_DIR/munged.pid" --log-file="$SLURM_DIR/munged.log" \
        --seed-file="$SLURM_DIR/munged.seed" 2>>"$SLURM_DIR/munged.log" &
    p=$!
    SLURM_MUNGED_PID=$p
    ready=no
    for _ in $(seq 1 200); do
        [ -S "$SLURM_DIR/munge.sock" ] && { ready=yes; break; }
        kill -0 "$p" 2>/dev/null || break
        sleep 0.05
    done
    [ $ready = yes ] || vm_skip "$(slurm_why munged "$SLURM_DIR/munged.log")"

    slurm_conf "$n"
    export SLURM_CONF=$SLURM_DIR/slurm.conf SLURM_DIR
    SLURM_LOGIN="ip netns exec $VM_PREFIX-ctl"
    export SLURM_LOGIN
    slurm_run slurmctld -D -f "$SLURM_CONF" >>"$SLURM_DIR/slurmctld.out" 2>&1 &
    SLURM_CTLD_PID=$!
    SLURM_NODES=""
    SLURM_SLURMD_PIDS=()
    for i in $(seq 0 $((n - 1))); do
        node=${VM_HOSTS[$i]}
        mkdir -p "$SLURM_DIR/spool/$node"
        vm_exec "$i" slurmd -D -N "$node" -f "$SLURM_CONF" >>"$SLURM_DIR/slurmd.$node.out" 2>&1 &
        SLURM_SLURMD_PIDS+=($!)
        SLURM_NODES=$SLURM_NODES${SLURM_NODES:+,}$node
    done
    export SLURM_NODES

    # ready: sinfo shows every node idle (each poll bounded; 60 s in all)
    ready=no
    for _ in $(seq 1 300); do
        kill -0 "$SLURM_CTLD_PID" 2>/dev/null || vm_skip "$(slurm_why slurmctld "$SLURM_DIR/slurmctld.log")"
        for i in $(seq 0 $((n - 1))); do
            kill -0 "${SLURM_SLURMD_PIDS[$i]}" 2>/dev/null ||
                vm_skip "$(slurm_why "slurmd on ${VM_HOSTS[$i]}" "$SLURM_DIR/slurmd.${VM_HOSTS[$i]}.log")"
        done
        states=$(slurm_run timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$')
        [ "$states" = "$n" ] && { ready=yes; break; }
        sleep 0.2
    done
    [ $ready = yes ] || vm_skip "slurm nodes not idle after 60 s: $(slurm_run timeout 5 sinfo -h -N -o '%N %T %E' 2>&1 | tr '\n' ' ')"
}

# slurm_down: stops slurmd, slurmctld and munged (TERM, then vm_down's KILL); the
# namespaces and files go with vm_down.
slurm_down() {
    local p
    [ -n "$SLURM_DIR" ] || return 0
    for p in ${SLURM_SLURMD_PIDS[@]+"${SLURM_SLURMD_PIDS[@]}"} ${SLURM_CTLD_PID:-}; do
        kill "$p" 2>/dev/null
    done
    [ -n "${SLURM_MUNGED_PID:-}" ] && kill "$SLURM_MUNGED_PID" 2>/dev/null
    SLURM_DIR=""
}
