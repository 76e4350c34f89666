#!/bin/bash
# t/pvm_notify_early.sh — PvmTaskExit of a spawned task that dies before its first PVM call
# (issue 25 point 7): a master (t/notify_early) spawns a live child and one that SIGKILLs
# itself, runs a script that does, or exits at once; the dead one's notice comes within
# 1 s, as PVM 3.4.6 sends it, none comes for the live one, and no zombie is left below the
# master or gimpirun; and a sibling that watches the dead one gets its notice while the
# master, which asks for none, waits for the sibling.  From the shell with a private
# groupd (also as the first process of
# a pid namespace, as in a container: the orphans are then the master's own, and it must
# reap them), under gimpirun -np 1 (the
# spawns are local: the spawner tells groupd), and in a two-host virtual machine (an
# emulated host through t/rsh_here.sh: gimpirun's agents start the children and tell).
# And a spawner that is busy computing (no PVM call) when its child dies, or has exited:
# a watcher's notice still comes within 1 s (the spawner's watcher thread, its heir).
set -u
top_builddir=${top_builddir:-.}
TASK="$(cd "$top_builddir/t" && pwd)/notify_early"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..15"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
printf '#!/bin/sh\nkill -9 $$\n' >"$tmp/die.sh"; chmod 755 "$tmp/die.sh"

for how in kill exit script; do
    timeout 60 "$TASK" master "$how" "$tmp/die.sh" >"$tmp/$how" 2>"$tmp/$how.err"; rc=$?
    [ $rc = 0 ] && grep -q "^early ok" "$tmp/$how"
    check $? "shell: a child that dies at once ($how): notice within 1 s, no zombie (exit $rc)" \
        "$tmp/$how" "$tmp/$how.err"
done
timeout 60 "$TASK" sibling >"$tmp/sib" 2>"$tmp/sib.err"; rc=$?
[ $rc = 0 ] && grep -q "^early ok" "$tmp/sib"
check $? "a sibling watches; the master asks nothing, waits for the sibling: notice in 1.5 s" \
    "$tmp/sib" "$tmp/sib.err"
for how in kill exit; do
    if ! unshare -fp --mount-proc true 2>/dev/null; then
        ok 0 "# SKIP no pid namespace here (unshare -fp): the master as a first process"
        continue
    fi
    # with tagged output (exit): the taggers are the master's orphans too
    GIMPI_TAG=$([ "$how" = exit ] && echo 1 || echo 0) timeout 60 unshare -fp --mount-proc \
        "$TASK" master "$how" >"$tmp/ns$how" 2>"$tmp/ns$how.err"
    rc=$?
    [ $rc = 0 ] && grep -q "^early ok" "$tmp/ns$how"
    check $? "the master as pid 1 of a namespace ($how): notice, orphans reaped (exit $rc)" \
        "$tmp/ns$how" "$tmp/ns$how.err"
done
busy_gone() {   # $1: label; the rest: the launcher's words before the program
    local label=$1; shift
    rm -f "$tmp/fifo"
    timeout 60 "$@" "$TASK" busy "$tmp/fifo" >"$tmp/busy" 2>"$tmp/busy.err"; rc=$?
    [ $rc = 0 ] && grep -q "early ok" "$tmp/busy"
    check $? "$label: the spawner computes for 3 s when its child dies: notice within 1 s" \
        "$tmp/busy" "$tmp/busy.err"
    rm -f "$tmp/fifo" "$tmp/gone.res"
    timeout 60 "$@" "$TASK" gone "$tmp/fifo" "$tmp/gone.res" >"$tmp/gone" 2>"$tmp/gone.err"
    for _ in $(seq 1 250); do [ -s "$tmp/gone.res" ] && break; sleep 0.02; done
    read -r got took <"$tmp/gone.res" 2>/dev/null
    [ "${got:-0}" = 1 ] && awk -v t="${took:-9}" 'BEGIN { exit !(t <= 1.0) }'
    check $? "$label: the spawner exited, then its child died: notice within 1 s ($took s)" \
        "$tmp/gone" "$tmp/gone.err"
}
busy_gone shell env
unset GIMPI_GROUPD GIMPI_GROUPD_BIN
busy_gone "gimpirun -np 1" "$RUN" -np 1
for how in kill script; do
    timeout 60 "$RUN" -np 1 "$TASK" master "$how" "$tmp/die.sh" >"$tmp/r$how" 2>"$tmp/r$how.err"
    rc=$?
    [ $rc = 0 ] && grep -q "early ok" "$tmp/r$how"
    check $? "gimpirun -np 1: a child that dies at once ($how): notice within 1 s (exit $rc)" \
        "$tmp/r$how" "$tmp/r$how.err"
done
B=$(cd "$top_builddir" && pwd)
printf 'localhost\nother ip=192.0.2.77\n' >"$tmp/hosts"
for how in kill script; do
    (cd "$tmp" && timeout 60 env GIMPI_RSH="$(cd "${top_srcdir:-.}" && pwd)/t/rsh_here.sh" \
        GIMPI_PATH="$B/t" GIMPI_GROUPD_BIN="$B/groupd/groupd" "$B/programs/gimpirun" \
        -hostfile "$tmp/hosts" -np 1 "$TASK" master "$how" "$tmp/die.sh") \
        >"$tmp/v$how" 2>"$tmp/v$how.err"
    rc=$?
    [ $rc = 0 ] && grep -q "early ok" "$tmp/v$how"
    check $? "two-host VM: a child that dies at once ($how): notice within 1 s (exit $rc)" \
        "$tmp/v$how" "$tmp/v$how.err"
done
exit $((failed > 0))
