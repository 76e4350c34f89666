#!/bin/bash
# t/slurm_smoke.sh — proves the Slurm of t/slurm.sh: munged, slurmctld and two slurmd on
# two emulated hosts.  Steps of a two-node allocation run on both hosts (each sees its own
# address and hostname), salloc sets the allocation's variables, a step started later on
# a chosen node with `srun --overlap --nodes=1 --ntasks=1 --nodelist=n1` runs while an
# earlier step still holds the CPUs and passes stdin and stdout through, without
# --overlap it waits, and the same works from a batch script on the first node (where a
# launcher under sbatch runs).
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"
. "${top_srcdir:-.}/t/slurm.sh"

# now in milliseconds
ms() { echo $(( $(date +%s%N) / 1000000 )); }

t0=$(ms)
slurm_up 2
echo "1..9"
echo "# slurm_up 2 took $(( $(ms) - t0 )) ms"
W=$tmp/w
mkdir -p "$W"

# a step on both nodes: each on its own host
t0=$(ms)
slurm_run timeout 30 salloc -N2 srun -l bash -c \
    'echo "$SLURMD_NODENAME $(hostname) $(ip -4 -o addr show eth0 | awk "{print \$4}")"' \
    >"$W/hosts" 2>"$W/hosts.err"
rc=$?
echo "# salloc -N2 srun took $(( $(ms) - t0 )) ms"
if [ $rc = 0 ] && grep -qx '0: n0 n0 198.51.100.10/24' "$W/hosts" && grep -qx '1: n1 n1 198.51.100.11/24' "$W/hosts"; then
    ok 0 "salloc -N2 srun: task 0 on n0 (198.51.100.10), task 1 on n1 (198.51.100.11)"
else
    ok 1 "salloc -N2 srun (rc $rc)"; sed 's/^/# /' "$W/hosts" "$W/hosts.err"
fi

# the allocation's variables
out=$(slurm_run timeout 30 salloc -N2 bash -c 'echo "$SLURM_JOB_NODELIST $SLURM_TASKS_PER_NODE $SLURM_NNODES $SLURM_JOB_NUM_NODES"' 2>"$W/vars.err")
[ "$out" = "n[0-1] 1(x2) 2 2" ]; ok $? "salloc -N2 sets SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE, SLURM_NNODES ($out)"

# inside one allocation: a step holds every CPU of both nodes until told to stop; a later
# step on n1 with --overlap runs meanwhile and carries stdin; without --overlap it waits
cat >"$W/alloc.sh" <<'EOF'
W=$1
srun -N2 -n2 bash -c 'echo "up $SLURMD_NODENAME"; while [ ! -e "$0/stop" ]; do sleep 0.1; done' "$W" >"$W/long.out" 2>&1 &
long=$!
for _ in $(seq 1 300); do [ "$(grep -c '^up ' "$W/long.out")" = 2 ] && break; sleep 0.05; done
echo "long step up on: $(grep '^up ' "$W/long.out" | sort | tr '\n' ' ')"
s=$(date +%s%N)
echo x | srun --overlap --nodes=1 --ntasks=1 --nodelist=n1 bash -c 'echo "$(hostname) $(cat) $SLURM_STEP_ID"' >"$W/overlap.out" 2>"$W/overlap.err"
echo "overlap rc $? in $(( ($(date +%s%N) - s) / 1000000 )) ms"
timeout 3 srun --nodes=1 --ntasks=1 --nodelist=n1 true >"$W/plain.out" 2>&1
echo "plain rc $?"
touch "$W/stop"
wait $long
echo "long rc $?"
EOF
slurm_run timeout 60 salloc -N2 bash "$W/alloc.sh" "$W" >"$W/alloc.out" 2>"$W/alloc.err"
rc=$?
sed 's/^/# /' "$W/alloc.out"
grep -q '^long step up on: up n0 up n1 $' "$W/alloc.out"
ok $? "a step on both nodes holds the allocation"
ov=$(cat "$W/overlap.out")
[ "$ov" = "n1 x 1" ] && grep -q '^overlap rc 0 ' "$W/alloc.out"
ok $? "srun --overlap --nodes=1 --ntasks=1 --nodelist=n1 meanwhile: on n1, stdin through, step 1 ($ov)"
grep -q '^plain rc 124' "$W/alloc.out"
ok $? "the same without --overlap waits for the CPUs (killed after 3 s)"
[ $rc = 0 ] && grep -q '^long rc 0' "$W/alloc.out"
ok $? "the first step ends when told, the allocation exits 0 (rc $rc)"

# from a batch script: it runs on n0, its steps reach n1
cat >"$W/batch.sh" <<EOF
#!/bin/bash
echo "batch on \$(hostname) nodes \$SLURM_JOB_NODELIST"
echo y | srun --overlap --nodes=1 --ntasks=1 --nodelist=n1 bash -c 'echo "step on \$(hostname) \$(cat)"'
EOF
t0=$(ms)
job=$(slurm_run timeout 30 sbatch --parsable -N2 -o "$W/batch.out" "$W/batch.sh" 2>"$W/sbatch.out")
# the job's end, asked of the controller (sbatch --wait polls only every few seconds)
state=""
for _ in $(seq 1 300); do
    state=$(slurm_run timeout 10 scontrol -o show job "$job" 2>>"$W/sbatch.out" | grep -o 'JobState=[A-Z]*')
    case $state in JobState=PENDING | JobState=RUNNING | JobState=CONFIGURING | JobState=COMPLETING | "") ;; *) break ;; esac
    sleep 0.1
done
echo "# sbatch job $job: $state after $(( $(ms) - t0 )) ms"
[ "$state" = JobState=COMPLETED ] && grep -qx 'batch on n0 nodes n\[0-1\]' "$W/batch.out"
ok $? "sbatch -N2: the script runs on n0 with SLURM_JOB_NODELIST n[0-1] ($state)"
grep -qx 'step on n1 y' "$W/batch.out"
ok $? "from the batch script, srun --overlap --nodelist=n1 lands on n1 with stdin"
[ "$state" = JobState=COMPLETED ] || sed 's/^/# /' "$W/sbatch.out" "$W/batch.out"

# the nodes are idle again and nothing is left in the queue
q=$(slurm_run timeout 10 squeue -h | wc -l)
st=$(slurm_run timeout 10 sinfo -h -N -o %T | sort -u | tr '\n' ' ')
[ "$q" = 0 ] && [ "$st" = "idle " ]; ok $? "queue empty, nodes idle afterwards ($q jobs, $st)"
exit $((failed > 0))
