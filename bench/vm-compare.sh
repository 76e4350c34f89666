#!/bin/bash
# bench/vm-compare.sh — gimpi beside Open MPI across emulated hosts: four network
# namespaces on a bridge, each with a real sshd (t/vmhosts.sh), gimpirun -H and Open MPI's
# own mpirun over the same ssh, the same veth network.  For n = 4 (one task per host) and
# n = 8 (two per host) and each group figure, the two systems run in alternation, REPS
# times; the table shows medians (µs) and gimpi/Open MPI ratios, then the geometric mean.
# It also times pvm_spawn of 8 tasks across the 4 hosts (t/vm_task spawntime) beside
# mpirun starting 8 processes there.  Needs root; Open MPI's collbench from the peer
# benchmarks ($BENCH_OUT/mpi/bin/collbench-ompi).  Open MPI yields when idle
# (mpi_yield_when_idle, what it does itself when oversubscribed): the emulated hosts share
# this machine's cores, and its default busy polling would make each operation cost whole
# time slices.
#
#   bench/vm-compare.sh BUILD [REPS] [FIGURES] [NS]
set -u
BUILD=$(cd "${1:?usage: vm-compare.sh BUILD [REPS] [FIGURES] [NS]}" && pwd)
REPS=${2:-3}
FIGS=${3:-"barrier bcast8 bcast1m reduce1int reduce1mdbl"}
NS=${4:-"4 8"}
SRC=$(cd "$(dirname "$0")/.." && pwd)
COLL=${BENCH_OUT:-${TMPDIR:-/tmp}/gimpi-bench}/mpi/bin/collbench-ompi
[ -x "$COLL" ] || { echo "vm-compare: no $COLL (build the peer benchmarks first)" >&2; exit 2; }
n=0 failed=0
. "$SRC/t/tap.sh" >/dev/null
. "$SRC/t/vmhosts.sh"
vm_up 4 >/dev/null
RAW=$VM_DIR/raw
: >"$RAW"

# one gimpi run: the figure's median_us, or nothing
gimpi_run() { # N SLOTS FIG
    local hosts=${VM_ADDRS[0]}:$2,${VM_ADDRS[1]}:$2,${VM_ADDRS[2]}:$2,${VM_ADDRS[3]}:$2
    vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$BUILD/groupd/groupd" \
        timeout 300 "$BUILD/programs/gimpirun" -H "$hosts" -np "$1" \
        "$BUILD/bench/gimpi-pvm-bench" --task "$3" "$1" "vmb-$RANDOM$RANDOM" 2>/dev/null |
        grep -o 'median_us=[0-9.]*' | head -1 | cut -d= -f2
}
# one Open MPI run
ompi_run() { # N SLOTS FIG
    local hosts=${VM_ADDRS[0]}:$2,${VM_ADDRS[1]}:$2,${VM_ADDRS[2]}:$2,${VM_ADDRS[3]}:$2
    vm_exec 0 timeout 300 mpirun.openmpi --allow-run-as-root --prefix /usr \
        --mca plm_rsh_agent "$VM_SSH" --host "$hosts" -np "$1" \
        --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include eth0 --mca mpi_yield_when_idle 1 \
        --mca oob_tcp_if_include eth0 "$COLL" ompi-tcp "$3" 2>/dev/null |
        grep -o 'median_us=[0-9.]*' | head -1 | cut -d= -f2
}
for N in $NS; do
    S=$((N / 4))
    for F in $FIGS; do
        for r in $(seq 1 "$REPS"); do
            echo "gimpi $F $N $(gimpi_run "$N" "$S" "$F")" >>"$RAW"
            echo "ompi $F $N $(ompi_run "$N" "$S" "$F")" >>"$RAW"
        done
    done
done
# spawn of 8 across 4 hosts, beside mpirun starting 8 there
for r in $(seq 1 "$REPS"); do
    t=$(vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$BUILD/groupd/groupd" \
        GIMPI_PATH="$BUILD/t" timeout 120 "$BUILD/programs/gimpirun" \
        -H "${VM_ADDRS[0]},${VM_ADDRS[1]},${VM_ADDRS[2]},${VM_ADDRS[3]}" -np 1 \
        "$BUILD/t/vm_task" spawntime 8 2>/dev/null | grep -o 'spawn_us=[0-9]*' | cut -d= -f2)
    echo "gimpi spawn8 8 $t" >>"$RAW"
    s=$(date +%s%N)
    vm_exec 0 timeout 120 mpirun.openmpi --allow-run-as-root --prefix /usr \
        --mca plm_rsh_agent "$VM_SSH" --host "${VM_ADDRS[0]}:2,${VM_ADDRS[1]}:2,${VM_ADDRS[2]}:2,${VM_ADDRS[3]}:2" \
        -np 8 --mca oob_tcp_if_include eth0 /bin/true >/dev/null 2>&1
    echo "ompi spawn8 8 $(( ($(date +%s%N) - s) / 1000 ))" >>"$RAW"
done
python3 - "$RAW" <<'EOF'
import sys, statistics, math
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4:
        try: rows.setdefault((p[1], p[2]), {}).setdefault(p[0], []).append(float(p[3]))
        except ValueError: pass
print("| figure | n | gimpi µs | Open MPI µs | ratio |")
print("|---|---|---|---|---|")
logs = []
for (f, n), d in rows.items():
    g = statistics.median(d.get("gimpi", [math.nan])); o = statistics.median(d.get("ompi", [math.nan]))
    ratio = g / o if o else math.nan
    if f != "spawn8" and ratio == ratio: logs.append(math.log(ratio))
    print(f"| {f} | {n} | {g:.1f} | {o:.1f} | {ratio:.2f} |")
if logs: print(f"\ngeometric mean of the group cells: {math.exp(sum(logs)/len(logs)):.3f}")
EOF
