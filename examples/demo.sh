#!/bin/bash
# examples/demo.sh — the README's demo (`./setup.sh demo` runs it), in two parts:
#  1. IMPI: starts an IMPI startup server for three clients on loopback, then three startup
#     clients of different shapes (hosts x procs), lets them run the whole IMPI startup
#     (AUTH, IMPI, COLL for every label, DONE, FINI) through the server, and prints the
#     tables each client says they agreed on.
#  2. PVM groups: runs the example programs — `gimpirun -np 4 examples/pvm_master_worker`
#     (groups, barrier, bcast, gather, reduce) and `examples/pvm_spawn_farm 3` started from
#     the shell (pvm_spawn) — each printing its check line.  groupd is found or started
#     as for any task (GIMPI_GROUPD, else the per-user one; an auto-started one exits by
#     itself once idle).
#
#   examples/demo.sh [BUILDDIR]    (default: $top_builddir, else ../_build next to this script)
#
# Exits 0 when the server, all clients and both examples exited 0; otherwise says which did
# not, with their stderr.  Every wait is bounded (DEMO_TIMEOUT seconds, default 60).
set -u
# IMPI convention: a client authenticates only with a method the environment enables.
# The demo runs on the loopback, so it enables NONE unless the caller chose a method.
if [ -z "${IMPI_AUTH_NONE+x}" ] && [ -z "${IMPI_AUTH_KEY+x}" ]; then export IMPI_AUTH_NONE=; fi

here=$(cd "$(dirname "$0")" && pwd)
B=${1:-${top_builddir:-$here/../_build}}
SERVER=$B/programs/impi-server
CLIENT=$B/examples/impi-startup
GIMPIRUN=$B/programs/gimpirun
MW=$B/examples/pvm_master_worker
FARM=$B/examples/pvm_spawn_farm
# a task started from the shell (the farm's master) starts groupd if none runs: the one of
# this build tree when it is not installed
[ -n "${GIMPI_GROUPD_BIN:-}" ] || export GIMPI_GROUPD_BIN=$B/groupd/groupd
TIMEOUT=${DEMO_TIMEOUT:-60}
# Client r's shape: "HOSTS PROCS".
SHAPES=("1 2" "2 3" "1 1")
NCLIENTS=${#SHAPES[@]}

# Prints a message on stderr and stops with status 1.
die() { echo "demo: $*" >&2; exit 1; }

for prog in "$SERVER" "$CLIENT" "$GIMPIRUN" "$MW" "$FARM"; do
    if [ ! -x "$prog" ]; then
        echo "demo: $prog is not built." >&2
        echo "demo: the demo needs programs/impi-server, programs/gimpirun and the examples in the build" \
             "directory $B (run ./setup.sh build; if they still are missing, this tree does" \
             "not contain them yet)." >&2
        exit 2
    fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gimpi-demo.XXXXXX") || die "mktemp failed"
pids=()
# Stops whatever this script started and is still running, removes the scratch directory.
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The server's first stdout line is its address: read it from a FIFO with a deadline.
mkfifo "$tmp/server.fifo" || die "mkfifo failed"
timeout -k 5 "$TIMEOUT" "$SERVER" -server "$NCLIENTS" -host 127.0.0.1 \
    >"$tmp/server.fifo" 2>"$tmp/server.err" &
server_pid=$!
pids+=("$server_pid")
exec 3<"$tmp/server.fifo"
if ! read -r -t 20 -u 3 addr; then
    cat "$tmp/server.err" >&2
    die "impi-server printed no address (it exited, or 20 s passed)"
fi
cat <&3 >"$tmp/server.out" &
pids+=($!)
exec 3<&-
[[ $addr =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+:[0-9]+$ ]] ||
    die "impi-server's first line is not A.B.C.D:PORT: '$addr'"
echo "impi-server -server $NCLIENTS listens on $addr"

client_pids=()
for ((r = 0; r < NCLIENTS; r++)); do
    read -r hosts procs <<<"${SHAPES[r]}"
    echo "client $r: impi-startup -client $r $addr -hosts $hosts -procs $procs"
    timeout -k 5 "$TIMEOUT" "$CLIENT" -client "$r" "$addr" -hosts "$hosts" -procs "$procs" \
        >"$tmp/client$r.out" 2>"$tmp/client$r.err" &
    client_pids+=($!)
    pids+=($!)
done

failed=0
for ((r = 0; r < NCLIENTS; r++)); do
    wait "${client_pids[r]}"
    rc=$?
    echo
    echo "=== client $r (-hosts ${SHAPES[r]% *} -procs ${SHAPES[r]#* }): exit $rc ==="
    cat "$tmp/client$r.out"
    if [ "$rc" -ne 0 ]; then
        failed=1
        [ "$rc" -eq 124 ] && echo "demo: client $r did not finish within $TIMEOUT s" >&2
        sed "s/^/client $r stderr: /" "$tmp/client$r.err" >&2
        kill "$server_pid" 2>/dev/null    # it would wait for this client until its timeout
    fi
done

wait "$server_pid"
rc=$?
echo
if [ "$rc" -ne 0 ]; then
    failed=1
    echo "demo: impi-server exited with status $rc" >&2
    sed 's/^/impi-server stderr: /' "$tmp/server.err" >&2
fi
if [ "$failed" -ne 0 ]; then
    echo "demo: FAILED" >&2
    exit 1
fi
echo "demo: impi-server and the $NCLIENTS clients finished the IMPI startup (all exited 0)"

# example NAME CMD...: runs a PVM example (bounded), shows its output, notes a failure
example() {
    local name=$1; shift
    echo
    echo "=== $name: $* ==="
    timeout -k 5 "$TIMEOUT" "$@" 2>"$tmp/example.err"
    local rc=$?
    if [ "$rc" -ne 0 ]; then
        failed=1
        [ "$rc" -eq 124 ] && echo "demo: $name did not finish within $TIMEOUT s" >&2
        echo "demo: $name exited with status $rc" >&2
        sed "s/^/$name stderr: /" "$tmp/example.err" >&2
    fi
}
example "PVM groups under gimpirun" "$GIMPIRUN" -np 4 "$MW"
example "pvm_spawn from a shell-started master" "$FARM" 3
echo
if [ "$failed" -ne 0 ]; then
    echo "demo: FAILED" >&2
    exit 1
fi
echo "demo: the PVM examples printed their check lines (all exited 0)"
