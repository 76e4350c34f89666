#!/bin/bash
# t/gimpirun_stranger.sh — a stranger who holds a job's KEY (LAM's `-auth key` mode) takes
# a client's rank (issue 25, point 5): user nobody runs gimpirun -client 1 with the job's
# IMPI_AUTH_KEY before the real client 1.  The job (the real client 0 and the stranger)
# starts; the real client 0's dance refuses the stranger's host (another user), and when
# the real client 1 claims its rank impi-server stops the job: the real client 0 must end
# at once with a clear message (it hung until its 60 s timeout before), the real client 1
# fails its startup, and the server says why.  Every wait is bounded; it needs root and
# setpriv to run as nobody (else skipped).
set -u
top_builddir=${top_builddir:-.}
B=$(cd "$top_builddir" && pwd)
SERVER="$B/programs/impi-server"
RUN="$B/programs/gimpirun"
TASK="$B/t/job_msg"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..5"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
    for _ in 1 2 3 4 5; do skip "needs root and setpriv (to run as nobody)"; done
    exit 0
fi
NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
# a build tree under a directory only root may enter (mktemp -d's 0700) is out of nobody's reach
if ! $NOBODY test -x "$RUN"; then
    for _ in 1 2 3 4 5; do skip "user nobody cannot run $RUN (a parent directory is closed to it)"; done
    exit 0
fi
# waits (bounded) until file $1 has a line matching $2
waitfor() { for _ in $(seq 1 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
chmod 711 "$tmp"; mkdir -m 700 "$tmp/nob"; chown nobody "$tmp/nob"
KEY=8071450021335327517
unset GIMPI_GROUPD

mkfifo "$tmp/srv"
IMPI_AUTH_KEY=$KEY timeout 90 "$SERVER" -v -server 2 -host 127.0.0.1 -auth key \
    >"$tmp/srv" 2>"$tmp/srv.err" &
srv=$!
exec 3<"$tmp/srv"
read -r -t 20 addr <&3
(cd "$tmp/nob" && $NOBODY env -i PATH=/usr/bin:/bin HOME="$tmp/nob" IMPI_AUTH_KEY=$KEY \
    timeout 90 "$RUN" -client 1 "$addr" -np 1 "$TASK" ring 100 >"$tmp/nob/out" 2>&1) &
stranger=$!
waitfor "$tmp/srv.err" "client 1 joined"
ok $? "the stranger (nobody, with the job's KEY) joins as client 1" || sed 's/^/# /' "$tmp/srv.err"
start=$(date +%s)
IMPI_AUTH_KEY=$KEY timeout 90 "$RUN" -client 0 "$addr" -np 1 "$TASK" ring 100 >"$tmp/c0" 2>&1 &
c0=$!
waitfor "$tmp/srv.err" "client 0 joined"
IMPI_AUTH_KEY=$KEY timeout 90 "$RUN" -timeout 20 -client 1 "$addr" -np 1 "$TASK" ring 100 \
    >"$tmp/c1" 2>&1
rc1=$?
wait $c0; rc0=$?
took=$(($(date +%s) - start))
wait $stranger
[ $rc0 = 1 ] && [ $took -lt 30 ] && grep -q "impi-server closed the job's connection while the job runs" "$tmp/c0"
ok $? "the real client 0 stops at once with a clear message (exit $rc0 after $took s)" ||
    sed 's/^/# /' "$tmp/c0"
[ $rc1 = 1 ] && grep -q "startup failed" "$tmp/c1"
ok $? "the real client 1 fails its startup (exit $rc1)" || sed 's/^/# /' "$tmp/c1"
grep -q "rank 1 claimed again.*another party holds this job's key; the job stops" "$tmp/srv.err"
ok $? "the server says why it stops the job" || sed 's/^/# /' "$tmp/srv.err"
wait $srv; rc=$?
[ $rc = 1 ]; ok $? "the server exits 1 (exit $rc)"
exec 3<&-
exit $((failed > 0))
