#!/bin/bash
# t/pvm_context.sh — PVM message contexts and handlers between real tasks
# (t/pvm_context_task): two tasks under gimpirun make contexts that differ across tasks,
# see messages only in the context they were sent in (both ways), get PvmNotFound for
# freed, foreign and unknown contexts, and one answers the other from a message handler;
# a shell-started task spawns children from a new context and from the base one, and
# each child starts in its parent's context, on this host and on another one (emulated as
# in t/pvm_export_vm.sh: a hostfile names it with an address not this machine's, and
# t/rsh_here.sh stands in for ssh).  A private groupd serves; every run bounded.
set -u
top_builddir=${top_builddir:-.}
TASK="$top_builddir/t/pvm_context_task"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..5"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 120 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
unset GIMPI_PATH GIMPI_PVM_CONTEXT
# run NAME WANT ARGS...: runs ARGS bounded, wants exit 0 and WANT "ok" lines
run() {
    local name=$1 want=$2; shift 2
    timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$? got
    got=$(grep -c " ok$" "$tmp/out")
    if [ $rc = 0 ] && [ "$got" = "$want" ]; then ok 0 "$name"; else
        ok 1 "$name (exit $rc, $got of $want ok lines)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
run "2 tasks: unique contexts, isolation both ways, freecontext errors, wait ids travel, a handler replies" \
    2 "$RUN" -np 2 "$TASK" pair
run "spawned children start in their parent's context (a new one, then the base)" \
    1 "$TASK" spawn
GIMPI_PVM_CONTEXT=77 timeout 30 "$TASK" show >"$tmp/out" 2>"$tmp/err"
grep -qx "t1 context 77 ok" "$tmp/out"; ok $? "a task starts in the context GIMPI_PVM_CONTEXT names"
B=$(cd "$top_builddir" && pwd)
RSH="$(cd "${top_srcdir:-.}" && pwd)/t/rsh_here.sh"
printf 'localhost\nother ip=192.0.2.77\n' >"$tmp/hosts"
(cd "$tmp" && unset GIMPI_GROUPD && timeout 120 env GIMPI_RSH="$RSH" GIMPI_PATH="$B/t" \
    GIMPI_GROUPD_BIN="$B/groupd/groupd" \
    "$B/programs/gimpirun" -hostfile "$tmp/hosts" -np 1 "$B/t/pvm_context_task" vmspawn) \
    >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && grep -qx "t1 vmspawn ok" "$tmp/out"
ok $? "a child on another host starts in its parent's context too (exit $rc)" ||
    sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20
