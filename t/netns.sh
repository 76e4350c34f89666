#!/bin/bash
# t/netns.sh — several machines emulated with network namespaces: a "switch" namespace
# holding a bridge, and one namespace per machine joined to it by a veth pair, each with
# its own address in 192.0.2.0/24 (TEST-NET-1, never routed).  An impi-server runs on
# machine 0 and one gimpirun per machine joins the job as its IMPI client; the tasks
# must agree on tables that name every machine's address, and (when the data-plane test
# program exists) exchange messages across the machines.  Namespaces are created and
# removed here; the test skips only when the kernel refuses them.
set -u
top_builddir=${top_builddir:-.}
NM=3                                    # machines
P=gimpi$$
SERVER="$top_builddir/programs/impi-server"
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_task"
. "${top_srcdir:-.}/t/tap.sh"


cleanup() {
    for i in $(seq 0 $((NM - 1))); do ip netns pids "$P-h$i" 2>/dev/null | xargs -r kill -9 2>/dev/null; done
    for i in $(seq 0 $((NM - 1))); do ip netns del "$P-h$i" 2>/dev/null; done
    ip netns pids "$P-x" 2>/dev/null | xargs -r kill -9 2>/dev/null
    ip netns del "$P-x" 2>/dev/null
    ip netns del "$P-sw" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns add "$P-sw" 2>/dev/null; then
    echo "1..0 # SKIP network namespaces unavailable (needs root and iproute2)"
    exit 0
fi
ip -n "$P-sw" link add br0 type bridge && ip -n "$P-sw" link set br0 up || { echo "1..0 # SKIP no bridge support"; exit 0; }
for i in $(seq 0 $((NM - 1))); do
    ip netns add "$P-h$i"
    ip link add "$P-a$i" type veth peer name "$P-b$i"
    ip link set "$P-a$i" netns "$P-sw"
    ip link set "$P-b$i" netns "$P-h$i"
    ip -n "$P-sw" link set "$P-a$i" master br0 up
    ip -n "$P-h$i" link set "$P-b$i" name eth0
    ip -n "$P-h$i" addr add "192.0.2.$((10 + i))/24" dev eth0
    ip -n "$P-h$i" link set eth0 up
    ip -n "$P-h$i" link set lo up
done
# a stranger's machine on the same network, not part of any job
ip netns add "$P-x"
ip link add "$P-ax" type veth peer name "$P-bx"
ip link set "$P-ax" netns "$P-sw"
ip link set "$P-bx" netns "$P-x"
ip -n "$P-sw" link set "$P-ax" master br0 up
ip -n "$P-x" link set "$P-bx" name eth0
ip -n "$P-x" addr add 192.0.2.99/24 dev eth0
ip -n "$P-x" link set eth0 up
ip -n "$P-x" link set lo up
echo "1..$((NM + 10))"

# machine 0 serves the startup
mkfifo "$tmp/srv"
ip netns exec "$P-h0" timeout 60 "$SERVER" -server $NM -host 192.0.2.10 >"$tmp/srv" 2>"$tmp/srv.err" &
srvpid=$!
exec 3<"$tmp/srv"
addr=""
read -r -t 20 addr <&3
case "$addr" in 192.0.2.10:*) ok 0 "impi-server on machine 0 prints $addr" ;; *) ok 1 "impi-server address ($addr)" ;; esac

# one client per machine, two tasks each
pids=""
for i in $(seq 0 $((NM - 1))); do
    ip netns exec "$P-h$i" timeout 60 "$RUN" -client "$i" "$addr" -np 2 "$TASK" info \
        >"$tmp/c$i.out" 2>"$tmp/c$i.err" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
ok $rc "every machine's gimpirun exits 0"
for i in $(seq 0 $((NM - 1))); do
    r0=$((2 * i)); r1=$((2 * i + 1))
    if grep -q "^rank $r0 of $((2 * NM)) .* clients $NM" "$tmp/c$i.out" &&
       grep -q "^rank $r1 of $((2 * NM)) .* clients $NM" "$tmp/c$i.out"; then
        ok 0 "machine $i runs world ranks $r0 and $r1 of $((2 * NM))"
    else
        ok 1 "machine $i ranks"; sed 's/^/# /' "$tmp/c$i.out" "$tmp/c$i.err"
    fi
done
wait "$srvpid"; ok $? "impi-server exits 0 after every client's FINI"
exec 3<&-

# messages across the machines: every task sends 200 kB to every other before receiving
MSG="$top_builddir/t/job_msg"
mkfifo "$tmp/srv2"
ip netns exec "$P-h0" timeout 60 "$SERVER" -server $NM -host 192.0.2.10 >"$tmp/srv2" 2>"$tmp/srv2.err" &
srvpid=$!
exec 3<"$tmp/srv2"
addr=""
read -r -t 20 addr <&3
pids=""
for i in $(seq 0 $((NM - 1))); do
    GIMPI_DEBUG=1 ip netns exec "$P-h$i" timeout 60 "$RUN" -client "$i" "$addr" -np 2 "$MSG" alltoall 200000 \
        >"$tmp/m$i.out" 2>"$tmp/m$i.err" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
okl=$(cat "$tmp"/m*.out | grep -c "of $((2 * NM)): alltoall ok")
if [ $rc = 0 ] && [ "$okl" = $((2 * NM)) ]; then ok 0 "all-to-all across $NM machines (each its own address)"; else
    ok 1 "all-to-all across machines (rc $rc, $okl ok)"; cat "$tmp"/m*.out "$tmp"/m*.err | sed 's/^/# /' | head -20; fi
# the two tasks of a machine met over a local socket, tasks of different machines over TCP
nl=$(cat "$tmp"/m*.err | grep -c 'connected over a local socket')
nt=$(cat "$tmp"/m*.err | grep -c 'connected over TCP')
[ "$nl" = $((2 * NM)) ] && [ "$nt" = $((2 * NM * (2 * NM - 2))) ]
ok $? "tasks of one machine meet over local sockets, of different machines over TCP ($nl local, $nt TCP ends)"
wait "$srvpid"; ok $? "impi-server exits 0 after the messaging job"
exec 3<&-

# a stranger's machine during a job: it holds 100 idle connections to the server and
# tries to join with a key of its own; the job (KEY by default) still runs
mkfifo "$tmp/srv3" "$tmp/hold"
ip netns exec "$P-h0" timeout 60 "$SERVER" -server $NM -host 192.0.2.10 >"$tmp/srv3" 2>"$tmp/srv3.err" &
srvpid=$!
exec 3<"$tmp/srv3"
addr=""
read -r -t 20 addr <&3
exec 4<>"$tmp/hold"
ip netns exec "$P-x" timeout 60 bash -c 'for k in $(seq 1 100); do eval "exec $((k + 10))<>/dev/tcp/${1%:*}/${1#*:}" || exit 1; done; echo held; read -r _' _ "$addr" \
    <"$tmp/hold" >"$tmp/x.held" 2>"$tmp/x.err" &
idle=$!
for _ in $(seq 1 200); do grep -q held "$tmp/x.held" 2>/dev/null && break; sleep 0.05; done
grep -q held "$tmp/x.held"; ok $? "the stranger holds 100 idle connections to the server"
IMPI_AUTH_KEY=999 ip netns exec "$P-x" timeout 60 "$RUN" -timeout 5 -client 1 "$addr" -np 1 "$TASK" info \
    >"$tmp/x.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "startup failed" "$tmp/x.out"; then ok 0 "the stranger's client with another key: refused, clear error"; else
    ok 1 "the stranger's client (rc $rc)"; sed 's/^/# /' "$tmp/x.out"; fi
pids=""
for i in $(seq 0 $((NM - 1))); do
    ip netns exec "$P-h$i" timeout 60 "$RUN" -client "$i" "$addr" -np 1 "$TASK" info \
        >"$tmp/y$i.out" 2>"$tmp/y$i.err" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
wait "$srvpid" || rc=1
echo >&4; exec 4>&-; wait "$idle" 2>/dev/null
exec 3<&-
if [ $rc = 0 ]; then ok 0 "the real job runs meanwhile and the server exits 0"; else
    ok 1 "the real job beside the stranger"; cat "$tmp"/y*.err "$tmp/srv3.err" | sed 's/^/# /' | head -20; fi

# a client on a machine that cannot reach the server fails cleanly and quickly
ip -n "$P-h2" link set eth0 down
start=$(date +%s)
ip netns exec "$P-h2" timeout 60 "$RUN" -timeout 3 -client 0 192.0.2.10:9 -np 1 "$TASK" info \
    >"$tmp/u.out" 2>"$tmp/u.err"
rc=$?
el=$(( $(date +%s) - start ))
if [ $rc = 1 ] && grep -q "startup failed" "$tmp/u.err" && [ $el -lt 30 ]; then ok 0 "unreachable server: clear error, exit 1"; else ok 1 "unreachable server (rc $rc, ${el}s)"; sed 's/^/# /' "$tmp/u.err"; fi
exit $((failed > 0))
