#!/bin/bash
# t/gimpirun_world.sh — the world collectives (gimpi_world.h) in real IMPI jobs of several
# clients: one impi-server and several gimpirun -client running examples/impi_world, the
# LAM-style interop program (barrier, bcast from rank 0, reduce to the last rank,
# allreduce).  Two clients (2 + 3 tasks: the masters' phases are linear; the wire carries
# IMPI's bcast tag 120 on the collective context and the reduce's tag 190 on the
# point-to-point context) and five clients of one task (IMPI's trees between masters).
# Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
SERVER="$top_builddir/programs/impi-server"
RUN="$top_builddir/programs/gimpirun"
PROG="$top_builddir/examples/impi_world"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..9"

# starts a server for $1 clients; its address in $addr, its pid in $srv
server() {
    mkfifo "$tmp/srv$1"
    timeout 120 "$SERVER" -server "$1" -host 127.0.0.1 >"$tmp/srv$1" 2>"$tmp/srv$1.err" &
    srv=$!
    exec 3<"$tmp/srv$1"
    read -r -t 20 addr <&3
    exec 3<&-
}

timeout 60 "$RUN" -np 3 "$PROG" >"$tmp/one" 2>"$tmp/one.err"; rc=$?
[ $rc = 0 ] && [ "$(grep -c ' OK$' "$tmp/one")" = 3 ]
ok $? "one client of 3 tasks: every check passes (exit $rc)"

server 2
GIMPI_DEBUG=1 timeout 120 "$RUN" -client 1 "$addr" -np 3 "$PROG" >"$tmp/c1" 2>"$tmp/c1.err" &
c1=$!
GIMPI_DEBUG=1 timeout 120 "$RUN" -client 0 "$addr" -np 2 "$PROG" >"$tmp/c0" 2>"$tmp/c0.err"; rc0=$?
wait $c1; rc1=$?
[ $rc0 = 0 ] && [ $rc1 = 0 ] && [ "$(cat "$tmp/c0" "$tmp/c1" | grep -c ' of 5: .* OK$')" = 5 ]
st=$?
ok $st "two clients (2 + 3 tasks): every check passes at every rank (exits $rc0 $rc1)"
[ $st = 0 ] || sed 's/^/# /' "$tmp/c0" "$tmp/c1" "$tmp/c0.err" "$tmp/c1.err" | head -30
grep -q '^rank 4 of 5: bcast 1 2 3 4, sum 15, max 16 OK$' "$tmp/c1"
ok $? "the last rank got the sum 15 and everyone the max 16"
n120=$(cat "$tmp/c0.err" "$tmp/c1.err" | grep -c 'IMPI_PK_DATA len=16 .* tag=120 cid=1 ')
[ "$n120" -ge 1 ]; ok $? "the bcast crossed between clients as IMPI's (tag 120, cid 1: $n120)"
n190=$(cat "$tmp/c0.err" "$tmp/c1.err" | grep -c 'IMPI_PK_DATA len=4 .* tag=190 cid=0 ')
[ "$n190" -ge 2 ]; ok $? "the reduces crossed as LAM sends them (tag 190, cid 0: $n190)"
wait $srv; ok $? "server exits 0"

server 5
pids=""
for c in 1 2 3 4; do
    timeout 120 "$RUN" -client $c "$addr" -np 1 "$PROG" >"$tmp/f$c" 2>"$tmp/f$c.err" &
    pids="$pids $!"
done
timeout 120 "$RUN" -client 0 "$addr" -np 1 "$PROG" >"$tmp/f0" 2>"$tmp/f0.err"; rc=$?
for p in $pids; do wait $p || rc=1; done
[ $rc = 0 ] && [ "$(cat "$tmp"/f[0-4] | grep -c ' of 5: .* OK$')" = 5 ]
st=$?
ok $st "five clients of one task (IMPI's trees between masters; exit $rc)"
[ $st = 0 ] || sed 's/^/# /' "$tmp"/f[0-4] "$tmp"/f[0-4].err | head -30
grep -q '^rank 4 of 5: bcast 1 2 3 4, sum 15, max 16 OK$' "$tmp/f4"
ok $? "five clients: the last rank got the sum"
wait $srv; ok $? "server exits 0"
exit $((failed > 0))
