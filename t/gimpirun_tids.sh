#!/bin/bash
# t/gimpirun_tids.sh — one tid per task for the data plane and groupd alike: under gimpirun
# every task's data-plane tid is the tid groupd registered for it and names it in messages
# (t/job_tids), also in a job of two IMPI clients (both launchers reserve the same block);
# two concurrent jobs get disjoint tids; a task started from the shell gets a
# fresh tid of its own; without groupd a job still runs with tids 1..N and a warning; and a
# groupd that gimpirun started exits by itself once idle.  A private groupd serves the test
# (never the user's); every run is bounded.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_tids"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..15"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"

# tids SRC: the tids of the "rank R tid T ok" lines of a file, sorted
tids() { sed -n 's/^rank [0-9]* tid \([0-9]*\) ok$/\1/p' "$1" | sort -n; }

timeout 120 "$RUN" -np 3 "$TASK" >"$tmp/a" 2>"$tmp/a.err"; rc=$?
[ $rc = 0 ] && [ "$(grep -c ' ok$' "$tmp/a")" = 3 ]
check $? "3 tasks: data-plane tid = groupd's tid, messages name the tids groupd gave (exit $rc)" "$tmp/a" "$tmp/a.err"
first=$(tids "$tmp/a" | head -1)
[ "$(tids "$tmp/a" | tr '\n' ' ')" = "$first $((first + 1)) $((first + 2)) " ]
ok $? "the job's tids are one block: base+1 .. base+3 ($(tids "$tmp/a" | tr '\n' ' '))"
[ ! -s "$tmp/a.err" ]; check $? "quietly" "$tmp/a.err"

# two jobs at once: the first holds (its rank 0 reads a line) while the second runs
mkfifo "$tmp/hold"
timeout 120 "$RUN" -np 2 "$TASK" hold <"$tmp/hold" >"$tmp/b" 2>"$tmp/b.err" &
holder=$!
exec 3>"$tmp/hold"
for _ in $(seq 1 3000); do grep -q holding "$tmp/b" && break; sleep 0.02; done
timeout 120 "$RUN" -np 2 "$TASK" >"$tmp/c" 2>"$tmp/c.err"; rc=$?
echo go >&3; exec 3>&-
wait $holder; rcb=$?
[ $rc = 0 ] && [ $rcb = 0 ] && [ "$(grep -c ' ok$' "$tmp/b" "$tmp/c" | cut -d: -f2 | tr '\n' ' ')" = "2 2 " ]
check $? "two concurrent jobs both pass ($rcb, $rc)" "$tmp/b" "$tmp/b.err" "$tmp/c" "$tmp/c.err"
[ "$(cat <(tids "$tmp/a") <(tids "$tmp/b") <(tids "$tmp/c") | sort -n | uniq -d | wc -l)" = 0 ] \
    && [ "$(cat <(tids "$tmp/b") <(tids "$tmp/c") | wc -l)" = 4 ]
ok $? "with disjoint tids ($(tids "$tmp/b" | tr '\n' ' ')/ $(tids "$tmp/c" | tr '\n' ' '))"

# from the shell: a block of one of its own, twice at once
timeout 60 "$TASK" hold <"$tmp/hold" >"$tmp/d" 2>"$tmp/d.err" &
holder=$!
exec 3>"$tmp/hold"
for _ in $(seq 1 3000); do grep -q holding "$tmp/d" && break; sleep 0.02; done
timeout 60 "$TASK" >"$tmp/e" 2>"$tmp/e.err"; rc=$?
echo go >&3; exec 3>&-
wait $holder; rcd=$?
[ $rc = 0 ] && [ $rcd = 0 ] && [ "$(tids "$tmp/d" | wc -l)" = 1 ] && [ "$(tids "$tmp/e" | wc -l)" = 1 ]
check $? "two tasks started from the shell: each a one-task job whose tid groupd knows ($rcd, $rc)" "$tmp/d" "$tmp/d.err" "$tmp/e" "$tmp/e.err"
[ "$(cat <(tids "$tmp/a") <(tids "$tmp/b") <(tids "$tmp/c") <(tids "$tmp/d") <(tids "$tmp/e") | sort -n | uniq -d | wc -l)" = 0 ]
ok $? "fresh tids, not 1 ($(tids "$tmp/d") $(tids "$tmp/e"))"
[ ! -s "$tmp/d.err" ] && [ ! -s "$tmp/e.err" ]; check $? "quietly" "$tmp/d.err" "$tmp/e.err"

# two IMPI clients (impi-server + two gimpirun -client): one block for the whole job
mkfifo "$tmp/srv"
timeout 120 "$top_builddir/programs/impi-server" -server 2 -host 127.0.0.1 >"$tmp/srv" 2>"$tmp/srv.err" &
srv=$!
exec 4<"$tmp/srv"
read -r -t 20 addr <&4
timeout 120 "$RUN" -client 1 "$addr" -np 1 "$TASK" >"$tmp/m1" 2>"$tmp/m1.err" &
m1=$!
timeout 120 "$RUN" -client 0 "$addr" -np 2 "$TASK" >"$tmp/m0" 2>"$tmp/m0.err"; rc=$?
wait $m1; rc1=$?
wait $srv; rcs=$?
exec 4<&-
[ $rc = 0 ] && [ $rc1 = 0 ] && [ "$(cat "$tmp/m0" "$tmp/m1" | grep -c ' ok$')" = 3 ]
check $? "two clients (2 + 1 tasks): every tid agrees with groupd, across clients ($rc, $rc1)" \
    "$tmp/m0" "$tmp/m0.err" "$tmp/m1" "$tmp/m1.err"
cat "$tmp/m0" "$tmp/m1" >"$tmp/m"
mfirst=$(tids "$tmp/m" | head -1)
[ "$(tids "$tmp/m" | tr '\n' ' ')" = "$mfirst $((mfirst + 1)) $((mfirst + 2)) " ] \
    && [ "$(sed -n 's/^rank 2 tid \([0-9]*\) ok$/\1/p' "$tmp/m1")" = $((mfirst + 2)) ]
ok $? "one block for the job, world rank R has base + R + 1 ($(tids "$tmp/m" | tr '\n' ' '))"
[ $rcs = 0 ]; ok $? "the server exits 0"

# no groupd to be had: tids 1..N, group calls fail, the job still runs
GIMPI_GROUPD="ipc://$tmp/none" GIMPI_GROUPD_BIN=/nonexistent/groupd \
    timeout 60 "$RUN" -np 2 "$TASK" nogroupd >"$tmp/f" 2>"$tmp/f.err"; rc=$?
[ $rc = 0 ] && [ "$(tids "$tmp/f" | tr '\n' ' ')" = "1 2 " ]
check $? "without groupd: tids 1 and 2, group calls PvmSysErr (exit $rc)" "$tmp/f" "$tmp/f.err"
grep -q "gimpirun: warning: no tids from groupd" "$tmp/f.err"; check $? "gimpirun warns" "$tmp/f.err"

# a groupd that gimpirun starts goes away by itself once idle
GIMPI_GROUPD="ipc://$tmp/auto" GIMPI_GROUPD_IDLE=1 timeout 60 "$RUN" -np 2 "$TASK" >"$tmp/g" 2>&1; rc=$?
pid=$(cat "$tmp/auto.lock" 2>/dev/null)
for _ in $(seq 1 1000); do [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
[ $rc = 0 ] && [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null
check $? "the groupd gimpirun started (pid $pid) exits once idle (job exit $rc)" "$tmp/g"
[ -n "$pid" ] && kill "$pid" 2>/dev/null
exit $((failed > 0))
