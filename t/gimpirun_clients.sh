#!/bin/bash
# t/gimpirun_clients.sh — a job of two IMPI clients on the loopback: one impi-server and
# two gimpirun -client with different task counts; both clients' tasks must see the
# whole job (world ranks client by client), both launchers and the server exit 0.  Also:
# a client whose key the server refuses fails with a clear error and a non-zero exit;
# a gimpirun presenting the derived KEY (what every job took before each connection had
# to prove the key afresh, so what a captured startup gave away) is refused by a later
# job's default server, whose own client then runs.  And the tid block of a job of two
# clients cannot be taken from its tables: a task that computes the bare identity key
# (t/job_reserve, what every -client job used before the clients got the job's secret from
# the server) gets another block, in both clients.
set -u
top_builddir=${top_builddir:-.}
SERVER="$top_builddir/programs/impi-server"
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_task"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..13"

mkfifo "$tmp/srv"
timeout 60 "$SERVER" -server 2 -host 127.0.0.1 >"$tmp/srv" 2>"$tmp/srv.err" &
srv=$!
exec 3<"$tmp/srv"
read -r -t 20 addr <&3
case "$addr" in 127.0.0.1:*) ok 0 "server at $addr" ;; *) ok 1 "server address '$addr'" ;; esac
timeout 60 "$RUN" -tag -client 1 "$addr" -np 3 "$TASK" info >"$tmp/c1" 2>&1 &
c1=$!
timeout 60 "$RUN" -tag -client 0 "$addr" -np 2 "$TASK" info >"$tmp/c0" 2>&1
ok $? "client 0 (2 tasks) exits 0"
wait $c1; ok $? "client 1 (3 tasks) exits 0"
grep -q '^\[0\] rank 0 of 5 .*clients 2' "$tmp/c0" && grep -q '^\[1\] rank 1 of 5' "$tmp/c0"
ok $? "client 0 runs world ranks 0-1 of 5"
grep -q '^\[2\] rank 2 of 5' "$tmp/c1" && grep -q '^\[4\] rank 4 of 5 .*clients 2' "$tmp/c1"
ok $? "client 1 runs world ranks 2-4 of 5"
wait $srv; ok $? "server exits 0 after both FINIs"
exec 3<&-

# the server wants a key; this client offers a wrong one
mkfifo "$tmp/srv2"
IMPI_AUTH_KEY=1234 timeout 60 "$SERVER" -server 1 -host 127.0.0.1 -auth key >"$tmp/srv2" 2>"$tmp/srv2.err" &
srv=$!
exec 3<"$tmp/srv2"
read -r -t 20 addr <&3
IMPI_AUTH_KEY=999 timeout 60 "$RUN" -timeout 5 -client 0 "$addr" -np 1 "$TASK" info >"$tmp/bad" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "startup failed" "$tmp/bad"; then ok 0 "wrong key: clear error, exit 1"; else ok 1 "wrong key (rc $rc)"; sed 's/^/# /' "$tmp/bad"; fi
kill $srv 2>/dev/null; wait $srv 2>/dev/null
exec 3<&-

mkfifo "$tmp/srv3"
timeout 60 "$SERVER" -server 1 -host 127.0.0.1 >"$tmp/srv3" 2>"$tmp/srv3.err" &
srv=$!
exec 3<"$tmp/srv3"
read -r -t 20 addr <&3
IMPI_AUTH_KEY=$("$SERVER" -print-key) timeout 60 "$RUN" -timeout 5 -client 0 "$addr" -np 1 \
    "$TASK" info >"$tmp/cap" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "startup failed" "$tmp/cap"; then ok 0 "the derived KEY: refused, exit 1"; else ok 1 "the derived KEY (rc $rc)"; sed 's/^/# /' "$tmp/cap"; fi
timeout 60 "$RUN" -client 0 "$addr" -np 1 "$TASK" info >"$tmp/c3" 2>&1
ok $? "the job's own client (proof of the key file) runs after it"
wait $srv; ok $? "server exits 0"
exec 3<&-

mkfifo "$tmp/srv4"
timeout 60 "$SERVER" -server 2 -host 127.0.0.1 >"$tmp/srv4" 2>"$tmp/srv4.err" &
srv=$!
exec 3<"$tmp/srv4"
read -r -t 20 addr <&3
timeout 60 "$RUN" -client 1 "$addr" -np 1 "$top_builddir/t/job_reserve" >"$tmp/r1" 2>&1 &
c1=$!
timeout 60 "$RUN" -client 0 "$addr" -np 2 "$top_builddir/t/job_reserve" >"$tmp/r0" 2>&1
ok $? "a two-client job of t/job_reserve: client 0 exits 0"
wait $c1
[ "$(grep -c '^reserve got another block' "$tmp/r0" "$tmp/r1" | awk -F: '{ s += $2 } END { print s }')" = 3 ]
ok $? "its tasks compute the bare identity key: another block (no token of the job's)" ||
    sed 's/^/# /' "$tmp/r0" "$tmp/r1"
wait $srv; ok $? "server exits 0"
exec 3<&-
exit $((failed > 0))
