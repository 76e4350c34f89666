#!/bin/bash
# t/vm_slurm.sh — the virtual machine inside a real Slurm allocation: munged, slurmctld
# and two slurmd on emulated hosts n0 and n1 (t/slurm.sh).  gimpirun runs with no host
# flag, under salloc on the login node (ctl) and under sbatch on the first node; the
# allocation is its host set and it starts gimpi-agent on each other node as a step
# `srun --overlap --nodes=1 --ntasks=1 --nodelist=NODE`.  t/vm_task checks one task per
# slot on both nodes with pvm_config listing the allocation, output with -tag, pvm_tasks,
# the agents' steps, pvm_spawn onto the other node, a group across the nodes,
# GIMPI_SLURM=0 (one host, no agent) and a batch job.  Every wait is bounded (timeout);
# nothing sleeps to synchronise.
#
# On a real cluster the node names resolve (DNS or /etc/hosts) wherever jobs run, and
# gimpirun relies on it: it tells local from remote nodes and picks the address its
# groupd announces by resolving them.  The emulated nodes exist only in slurm.conf, so
# the test runs in a private mount namespace of its own and binds a hosts file that
# names n0, n1 and ctl over /etc/hosts there: the machine's /etc/hosts is not touched,
# and every daemon, step and task the test starts sees the names, as on a cluster.
# Before that, the test shows what happens where names do not resolve: gimpirun says so,
# and -if (the network to announce) is enough, since srun itself reaches the nodes.
set -u
if [ -z "${VM_SLURM_MNTNS:-}" ] && [ "$(id -u)" = 0 ] &&
    unshare --mount --propagation private true 2>/dev/null; then
    VM_SLURM_MNTNS=1 exec unshare --mount --propagation private -- "${BASH:-bash}" "$0" "$@"
fi
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"
. "${top_srcdir:-.}/t/slurm.sh"

if [ -z "${VM_SLURM_MNTNS:-}" ]; then
    [ "$(id -u)" = 0 ] || vm_skip "emulated hosts need root (network namespaces)"
    vm_skip "no private mount namespace to name the nodes in: $(unshare --mount --propagation private true 2>&1 | tail -n 1)"
fi
slurm_up 2
B=$(cd "$top_builddir" && pwd)
RUN="$B/programs/gimpirun"
T="$B/t/vm_task"
W=$VM_DIR/w
mkdir -p "$W"
out=$W/out

# now in milliseconds
ms() { echo $(( $(date +%s%N) / 1000000 )); }
# alloc ARGS... -- CMD...: salloc ARGS on the login node running CMD, output in $out,
# status in $rc; every gimpirun gets the build tree's groupd and programs
alloc() {
    local a=()
    while [ "$1" != -- ]; do a+=("$1"); shift; done
    shift
    slurm_run env GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
        timeout 60 salloc --quiet "${a[@]}" timeout 50 "$@" >"$out" 2>&1
    rc=$?
}

echo "1..12"

# --- before the names resolve: srun still reaches the nodes, but gimpirun cannot choose
# the address it announces by a route to them unless -if names the network
if getent hosts n0 >/dev/null; then
    n=$((n + 1)); echo "ok $n - # SKIP n0 resolves on this machine already"
else
    alloc -N2 -- "$RUN" "$T" config
    okd $([ $rc != 0 ] && has 'host n0: no route to it'; echo $?) "node names that do not resolve: gimpirun says so, naming the node"
fi
alloc -N2 -- "$RUN" -if eth0 "$T" config
okd $([ $rc = 0 ] && [ "$(count 'hosts 2 narch 1')" = 2 ]; echo $?) "the same with -if eth0: agents started by srun, 2 tasks see 2 hosts"

# the nodes' names, for this mount namespace only
{
    grep -vwE 'n[0-9]+|ctl' /etc/hosts
    for i in $(seq 0 $((VM_N - 1))); do echo "${VM_ADDRS[$i]} ${VM_HOSTS[$i]}"; done
    echo "$SLURM_CTL_ADDR $SLURM_CTL_NAME"
} >"$W/hosts"
mount --bind "$W/hosts" /etc/hosts || vm_bail "cannot bind a hosts file over /etc/hosts"
[ "$(slurm_run getent hosts n1 | awk '{print $1}')" = "${VM_ADDRS[1]}" ] ||
    vm_bail "n1 does not resolve on the login node"

# --- no host flag: the allocation is the host set, one task per slot
t0=$(ms)
alloc -N2 --ntasks-per-node=2 -- "$RUN" -tag "$T" config
took=$(( $(ms) - t0 ))
okd $([ $rc = 0 ] && [ "$(count 'hosts 2 narch 1')" = 4 ]; echo $?) "salloc -N2 --ntasks-per-node=2, gimpirun with no host flag: 4 tasks (2 slots on each node) see 2 hosts (${took} ms)"
ok $([ "$(count 'host n0 LINUX64 1000')" = 4 ] && [ "$(count 'host n1 LINUX64 1000')" = 4 ]; echo $?) "pvm_config names the allocation's nodes n0 and n1"
ok $(has '[3] hosts 2' && has '[0] host n1'; echo $?) "the tasks' output comes back through the srun steps with the -tag prefix"

alloc -N2 -- "$RUN" "$T" tasks
okd $([ $rc = 0 ] && [ "$(count 'mine OK')" = 2 ] && [ "$(count 'on my host OK')" = 2 ]; echo $?) "pvm_tasks: each task (one per node) is listed with its tid, pid, host and program"

# --- the agents are srun steps, one on each node, while the job runs
cat >"$W/steps.sh" <<'EOF'
"$1" "$2" wait >"$3/wait.out" 2>&1 &
job=$!
for _ in $(seq 1 300); do [ "$(grep -c '^ready' "$3/wait.out")" = 2 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
squeue -h -s -j "$SLURM_JOB_ID" -o '%i %N %j' | sort >"$3/steps"
kill -TERM $job
wait $job
echo "gimpirun rc $?"
for _ in $(seq 1 50); do
    squeue -h -s -j "$SLURM_JOB_ID" -o '%i %N %j' >"$3/steps.after"
    [ -s "$3/steps.after" ] || break
    sleep 0.1
done
EOF
alloc -N2 -- bash "$W/steps.sh" "$RUN" "$T" "$W"
sed 's/^/# step /' "$W/steps"
ok $([ "$(grep -c " n0 gimpi-agent$" "$W/steps")" = 1 ] && grep -q '^[0-9]*\.[0-9]* n0 ' "$W/steps" &&
    [ "$(grep -c " n1 gimpi-agent$" "$W/steps")" = 1 ] && grep -q '^[0-9]*\.[0-9]* n1 ' "$W/steps"; echo $?) \
    "while the job runs, its agents are srun steps, one on n0 and one on n1"
sed 's/^/# step left: /' "$W/steps.after"
okd $(has 'gimpirun rc' && [ ! -s "$W/steps.after" ]; echo $?) "TERM to gimpirun ends the job and its agents' steps"

# --- pvm_spawn onto the other node of the allocation
alloc -N2 -- "$RUN" -np 1 "$T" spawn 2 n1
okd $([ $rc = 0 ] && has 'spawned 2' && [ "$(count 'worker n1')" = 2 ] && ! has 'unknown tid'; echo $?) "pvm_spawn with where=n1: both workers answer from n1 with the tids pvm_spawn returned"

# --- a group across the nodes
alloc -N2 -- "$RUN" -np 2 "$T" group 2
okd $([ $rc = 0 ] && [ "$(count 'group ok')" = 2 ]; echo $?) "barrier, bcast and reduce over 2 tasks on n0 and n1"

# --- GIMPI_SLURM=0: the allocation is ignored; the same job with agents, and a bare
# srun step, timed in the same allocation
cat >"$W/time.sh" <<'EOF'
ms() { echo $(( $(date +%s%N) / 1000000 )); }
t0=$(ms); "$1" -np 2 "$2" config >"$3/vm.out" 2>&1; t1=$(ms)
GIMPI_SLURM=0 "$1" -np 2 "$2" config; t2=$(ms)
srun --overlap --nodes=1 --ntasks=1 --quiet --unbuffered --nodelist=n1 true; t3=$(ms)
echo "timing: with agents on n0 and n1 $((t1 - t0)) ms, one host $((t2 - t1)) ms, srun step $((t3 - t2)) ms"
EOF
alloc -N2 -- bash "$W/time.sh" "$RUN" "$T" "$W"
grep '^timing' "$out" | sed 's/^/# /'
okd $([ $rc = 0 ] && [ "$(count 'hosts 1 narch 1')" = 2 ] && [ "$(count "host $SLURM_CTL_NAME ")" = 2 ]; echo $?) "GIMPI_SLURM=0 in the allocation: a one-host job on the login node $SLURM_CTL_NAME, no agent"

# --- a batch job: gimpirun on the first node, an agent on the other
cat >"$W/batch.sh" <<EOF
#!/bin/bash
export GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t"
timeout 50 "$RUN" -np 2 "$T" spawn 2 n1 >"$W/batch.out" 2>&1
echo "rc \$?" >>"$W/batch.out"
EOF
job=$(slurm_run timeout 30 sbatch --parsable -N2 -o "$W/sbatch.log" "$W/batch.sh" 2>"$W/sbatch.err")
state=""
for _ in $(seq 1 600); do
    state=$(slurm_run timeout 10 scontrol -o show job "$job" 2>>"$W/sbatch.err" | grep -o 'JobState=[A-Z]*')
    case $state in JobState=PENDING | JobState=RUNNING | JobState=CONFIGURING | JobState=COMPLETING | "") ;; *) break ;; esac
    sleep 0.1
done
cp "$W/batch.out" "$out" 2>/dev/null || : >"$out"
okd $([ "$state" = JobState=COMPLETED ] && has 'rc 0' && [ "$(count 'spawned 2')" = 2 ] && [ "$(count 'worker n1')" = 4 ]; echo $?) "sbatch -N2: gimpirun on n0 runs a task on each node, each spawns 2 workers onto n1 ($state)"
exit $((failed > 0))
