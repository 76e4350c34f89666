#!/bin/bash
# t/gimpirun_coll.sh — the group-level operations in real jobs under gimpirun, with groupd's
# tids on the data plane (t/job_coll): 1, 2, 4 and 7 tasks.  A private groupd serves the
# test (never the user's); every run is bounded.  And a group spanning two IMPI clients:
# one impi-server, two gimpirun -client (2 + 3 tasks) sharing groupd; and five clients of
# one task each (more masters than MAXLINEAR 4: IMPI's tree between the masters).
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_coll"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..11"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
for np in 1 2 4 7; do
    timeout 120 "$RUN" -np $np "$TASK" >"$tmp/o$np" 2>"$tmp/e$np"; rc=$?
    [ $rc = 0 ] && [ "$(grep -c ' ok$' "$tmp/o$np")" = $np ]
    st=$?
    ok $st "$np task(s): group barrier, bcast, reduce, gather, scatter and their errors (exit $rc)"
    [ $st = 0 ] || sed 's/^/# /' "$tmp/o$np" "$tmp/e$np" | head -20
done

# two clients, one impi-server: the job's group spans both (without the task's leave:
# causal stamps stay within a client, see t/job_coll.c)
export JOB_COLL_CLIENTS=1
SERVER="$top_builddir/programs/impi-server"
mkfifo "$tmp/srv"
timeout 120 "$SERVER" -server 2 -host 127.0.0.1 >"$tmp/srv" 2>"$tmp/srv.err" &
srv=$!
exec 3<"$tmp/srv"
read -r -t 20 addr <&3
GIMPI_DEBUG=1 timeout 120 "$RUN" -client 1 "$addr" -np 3 "$TASK" >"$tmp/c1" 2>"$tmp/c1.err" &
c1=$!
GIMPI_DEBUG=1 timeout 120 "$RUN" -client 0 "$addr" -np 2 "$TASK" >"$tmp/c0" 2>"$tmp/c0.err"; rc0=$?
wait $c1; rc1=$?
[ $rc0 = 0 ] && [ $rc1 = 0 ] && [ "$(cat "$tmp/c0" "$tmp/c1" | grep -c ' ok$')" = 5 ]
st=$?
ok $st "a group over two clients (2 + 3 tasks): every operation (exits $rc0 $rc1)"
[ $st = 0 ] || sed 's/^/# /' "$tmp/c0" "$tmp/c0.err" "$tmp/c1" "$tmp/c1.err" | head -30
# the masters met with IMPI's barrier messages (tag 110, cid 1): far more than the world
# barrier at the end (one round between the two masters) accounts for
n110=$(cat "$tmp/c0.err" "$tmp/c1.err" | grep -c 'IMPI_PK_DATA len=0 .* tag=110 cid=1 ')
[ "$n110" -gt 40 ]; ok $? "the group barriers' inter-client phase is IMPI's ($n110 packets of tag 110)"
n190=$(cat "$tmp/c0.err" "$tmp/c1.err" | grep -c 'IMPI_PK_DATA len=4 .* tag=190 cid=0 ')
[ "$n190" -ge 2 ]; ok $? "the group reduces' inter-client phase is IMPI's ($n190 packets of tag 190)"
wait $srv; ok $? "server exits 0"
exec 3<&-

# five clients: the masters' tree
mkfifo "$tmp/srv5"
timeout 120 "$SERVER" -server 5 -host 127.0.0.1 >"$tmp/srv5" 2>"$tmp/srv5.err" &
srv=$!
exec 3<"$tmp/srv5"
read -r -t 20 addr <&3
pids=""
for c in 1 2 3 4; do
    timeout 120 "$RUN" -client $c "$addr" -np 1 "$TASK" >"$tmp/f$c" 2>"$tmp/f$c.err" &
    pids="$pids $!"
done
timeout 120 "$RUN" -client 0 "$addr" -np 1 "$TASK" >"$tmp/f0" 2>"$tmp/f0.err"; rc=$?
for p in $pids; do wait $p || rc=1; done
[ $rc = 0 ] && [ "$(cat "$tmp"/f[0-4] | grep -c ' ok$')" = 5 ]
st=$?
ok $st "a group over five clients of one task (IMPI's tree between masters; exit $rc)"
[ $st = 0 ] || sed 's/^/# /' "$tmp"/f[0-4] "$tmp"/f[0-4].err | head -30
wait $srv; ok $? "server exits 0"
exec 3<&-
exit $((failed > 0))
