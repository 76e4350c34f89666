#!/bin/bash
# t/pvm_halt.sh — pvm_halt and pvm_start_pvmd on a private groupd: halt ends every task
# (two spawned children, a task started from the shell) and groupd, and SIGTERMs its
# caller as PVM's pvmd did (exit 143), or returns 0 to a caller that ignores SIGTERM;
# pvm_start_pvmd answers PvmDupHost (-28) while a groupd serves, starts one that stays
# (no idle exit) when none does, refuses a hostfile (PvmNotImpl, -24), accepts pvmd options.
# Under gimpirun with a second host (emulated, t/rsh_here.sh) halt ends the children on
# both hosts and the job.
set -u
top_builddir=${top_builddir:-.}
PROG="$top_builddir/t/pvm_halt"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..11"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD" GIMPI_GROUPD_IDLE=1
gd_up() {   # a private groupd; 0 once it serves
    timeout 120 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
    gd_pid=$!
    for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
    [ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]
}
gd_gone() {  # 0 once groupd process $1 has ended (at most 10 s)
    for _ in $(seq 1 500); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.02; done
    return 1
}

gd_up; ok $? "private groupd serves"
timeout 60 "$PROG" lone >"$tmp/lone" 2>&1 &
lone=$!
for _ in $(seq 1 500); do [ -s "$tmp/lone" ] && break; sleep 0.02; done
out="$tmp/a"
timeout 60 "$PROG" master 2 >"$out" 2>"$tmp/a.err"; rc=$?
[ $rc = 143 ] && has "children 2" && ! has "halt"
okd $? "pvm_halt: the caller gets SIGTERM (exit $rc), as under PVM"
gd_gone "$gd_pid"; ok $? "groupd has exited"
[ "$(tap_gone 't/pvm_halt child' 10)" = 0 ]
ok $? "the spawned children are gone"
wait "$lone" 2>/dev/null; rc=$?
[ $rc = 143 ]; ok $? "a task started from the shell was ended too (SIGTERM: exit $rc)"

gd_up
out="$tmp/b"
timeout 60 "$PROG" master 1 ign >"$out" 2>"$tmp/b.err"; rc=$?
[ $rc = 0 ] && has "halt 0"; okd $? "a caller that ignores SIGTERM gets 0 back (exit $rc)"
gd_gone "$gd_pid"; ok $? "groupd has exited again"

out="$tmp/c"
timeout 60 "$PROG" start opt >"$out" 2>"$tmp/c.err"; rc=$?
has "start 0" && has "hostfile -24" && has "again -28"
okd $? "start_pvmd with none serving: 0 (pvmd options accepted); then PvmDupHost"
sleep 1.5   # longer than GIMPI_GROUPD_IDLE: a groupd with the idle exit would be gone
out="$tmp/d"
timeout 60 "$PROG" start >"$out" 2>"$tmp/d.err"
has "start -28" && has "hostfile -24"
okd $? "the started groupd stays (no idle exit): PvmDupHost; a hostfile: PvmNotImpl"
echo halt | timeout 30 "$top_builddir/programs/gimpi" >/dev/null 2>&1

B=$(cd "$top_builddir" && pwd)
printf 'localhost\nother ip=192.0.2.77\n' >"$tmp/hosts"
out="$tmp/e"
(cd "$tmp" && unset GIMPI_GROUPD && timeout 60 env GIMPI_PATH="$B/t" \
    GIMPI_RSH="$(cd "${top_srcdir:-.}" && pwd)/t/rsh_here.sh" \
    "$B/programs/gimpirun" -hostfile "$tmp/hosts" -np 1 "$B/t/pvm_halt" master 4) >"$out" 2>&1
rc=$?
[ $rc = 1 ] && has "children 4" && [ "$(grep -c "spawned task .* killed by signal 15" "$out")" = 4 ] \
    && [ "$(grep -c "pvm_halt, pid [0-9]* on other) killed" "$out")" = 2 ]
okd $? "under gimpirun on two hosts: the 4 children (2 on the other host) end, then the job (exit $rc)"
[ "$(tap_gone 't/pvm_halt (master|child)' 10)" = 0 ]
ok $? "no task of the job is left"
exit $((failed > 0))
