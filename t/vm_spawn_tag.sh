#!/bin/bash
# t/vm_spawn_tag.sh — spawned tasks on another host (two emulated hosts reached by the
# real OpenSSH, t/vmhosts.sh), issue 24 points 7 and 10: their lines under `gimpirun
# -tag` carry their own `[t<hex tid>]` alone, as those of a child spawned on the
# master's host do, and so do those of a grandchild that such a task spawns beside
# itself (its tagger's marked lines go through the agent); a bare name is looked for
# there on GIMPI_PATH, in the spawner's folder and in PVM's default ep, never on PATH:
# `true` is PvmNoFile, and gimpirun's message names every place looked on that host.
# Every wait is bounded (timeout); the master's fifo is written as soon as it opens it.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 2
TASK="$B/t/spawn_task"
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts"
unset GIMPI_PATH GIMPI_TAG

# run ARGS...: gimpirun -tag on h0 (bounded), output in $out, status in $rc
run() {
    vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" \
        timeout -k 10 90 "$RUN" -tag -hostfile "$VM_DIR/hosts" -np 1 "$@" >"$out" 2>&1
    rc=$?
}

echo "1..7"

mkfifo "$VM_DIR/fifo"
timeout 100 sh -c 'echo go >"$1"' sh "$VM_DIR/fifo" &   # the master's open returns at once
run "$TASK" tagwait "$VM_DIR/fifo" 3 "$H1"
okd $([ $rc = 0 ] && has "[0] tagwait ok"; echo $?) "a master spawns 3 children on the other host (exit $rc)"
lines=$(grep -Ec '^\[t[0-9a-f]+\] tagchild says (hello|on stderr)$' "$out")
okd $([ "$lines" = 6 ] && ! grep -q '\[0\] \[t' "$out"; echo $?) \
    "their lines on both streams carry their own [t<tid>] alone ($lines of 6)"

run "$TASK" nested "$H1"
okd $([ $rc = 0 ] && has "[0] nested ok"; echo $?) "a child on the other host spawns a grandchild beside it (exit $rc)"
mid=$(sed -n 's/^\[\(t[0-9a-f]*\)\] middle says hello$/\1/p' "$out")
gc=$(sed -n 's/^\[\(t[0-9a-f]*\)\] grandchild says hello$/\1/p' "$out")
okd $([ -n "$mid" ] && [ -n "$gc" ] && [ "$mid" != "$gc" ] && ! grep -q $'\x1e' "$out"; echo $?) \
    "the grandchild's line has its own tag alone, through the agent ($gc, parent $mid)"

run "$TASK" pathonly true nofile "$H1"
okd $([ $rc = 0 ] && has "[0] pathonly ok"; echo $?) "true (on PATH there) is PvmNoFile on the other host (exit $rc)"
okd $(grep -Eq "gimpirun: no program true on host .*: looked for .*$B/t/true \\((GIMPI_PATH|the spawner's folder)\\), .*/pvm3/bin/LINUX64/true \\(PVM's default ep\\); PATH is not searched" "$out"; echo $?) \
    "... and gimpirun names every place the agent looked"

run "$TASK" pathonly spawn_task runs "$H1"
okd $([ $rc = 0 ] && has "[0] pathonly ok"; echo $?) "a bare name in the spawner's folder is found on the other host (exit $rc)"
exit $((failed > 0))
