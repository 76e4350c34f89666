#!/bin/bash
# t/spawn_tag.sh — `gimpirun -tag` gives every line one tag, its task's own, on every host:
# `[N]` for the command line's task N, `[t<hex tid>]` for a spawned task, whether the
# task spawned it itself (its tagger marks the lines, gimpirun writes them without the
# spawner's `[0]`) or the virtual machine's manager started it; a grandchild's lines keep
# the grandchild's tag alone.  A child's tagger is the small gimpi-tagger program, not a
# copy of the spawning program: while 3 children run, `ps` shows the master once.
# Without a launcher (GIMPI_TAG=1 from the shell) lines carry no mark.  Issue 24, point 10.
set -u
top_builddir=${top_builddir:-.}
B=$(cd "$top_builddir" && pwd)
TASK="$B/t/spawn_task"
RUN="$B/programs/gimpirun"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..11"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_GROUPD_IDLE=5
unset GIMPI_PATH GIMPI_TAG
rx_out='^\[t[0-9a-f]+\] tagchild says hello$'
rx_err='^\[t[0-9a-f]+\] tagchild says on stderr$'

# --- a master that spawns 3 children on its own host, under gimpirun -tag
mkfifo "$tmp/fifo"
timeout 120 "$RUN" -tag -np 1 "$TASK" tagwait "$tmp/fifo" 3 >"$tmp/a" 2>"$tmp/a.err" &
run=$!
for _ in $(seq 1 1500); do grep -q "ready" "$tmp/a" && break; sleep 0.02; done
grep -q '^\[0\] ready$' "$tmp/a"
check $? "the master's own lines are [0]" "$tmp/a" "$tmp/a.err"
masters=$(tap_mine "^$TASK tagwait")
[ "$masters" = 1 ]; ok $? "ps shows one process of the master's program while 3 children run ($masters)"
mine=$(for p in $(pgrep -x gimpi-tagger); do
           tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "TAP_TAG=$tmp" && echo "$p"
       done)
taggers=$(echo $mine | wc -w)
exes=$(for p in $mine; do readlink "/proc/$p/exe"; done | sort -u)
[ "$taggers" = 3 ] && [ "$exes" = "$B/programs/gimpi-tagger" ]
ok $? "each child's tagger is the gimpi-tagger program ($taggers: $exes)"
echo go >"$tmp/fifo"
wait $run; rc=$?
[ $rc = 0 ] && grep -q '^\[0\] tagwait ok$' "$tmp/a"
check $? "the job ends well (exit $rc)" "$tmp/a" "$tmp/a.err"
[ "$(grep -Ec "$rx_out" "$tmp/a")" = 3 ] && [ "$(grep -Ec "$rx_err" "$tmp/a.err")" = 3 ] \
    && ! grep -q '\[0\] \[t' "$tmp/a" "$tmp/a.err" && ! grep -q $'\x1e' "$tmp/a" "$tmp/a.err"
check $? "a locally spawned child's lines carry its own tag alone: [t<tid>], not [0] [t<tid>]" \
    "$tmp/a" "$tmp/a.err"

# --- the same children started by the virtual machine's manager (as on another host)
timeout 120 "$RUN" -tag -H 127.0.0.1 -np 1 "$TASK" tagwait "$tmp/fifo" 3 >"$tmp/b" 2>"$tmp/b.err" &
run=$!
for _ in $(seq 1 1500); do grep -q "ready" "$tmp/b" && break; sleep 0.02; done
echo go >"$tmp/fifo"
wait $run; rc=$?
[ $rc = 0 ] && grep -q '^\[0\] tagwait ok$' "$tmp/b" && [ "$(grep -Ec "$rx_out" "$tmp/b")" = 3 ] \
    && [ "$(grep -Ec "$rx_err" "$tmp/b.err")" = 3 ]
check $? "children the manager started are tagged the same way (exit $rc)" "$tmp/b" "$tmp/b.err"
masters=$(tap_mine "^$TASK tagwait")
[ "$masters" = 0 ]; ok $? "nothing of the master is left ($masters)"

# --- a grandchild: its own tag, not its parent's nor the master's
timeout 120 "$RUN" -tag -np 1 "$TASK" nested >"$tmp/c" 2>"$tmp/c.err"; rc=$?
[ $rc = 0 ] && grep -q '^\[0\] nested ok$' "$tmp/c" \
    && grep -Eq '^\[t[0-9a-f]+\] middle says hello$' "$tmp/c" \
    && grep -Eq '^\[t[0-9a-f]+\] grandchild says hello$' "$tmp/c"
check $? "a grandchild's line has one tag, the grandchild's (exit $rc)" "$tmp/c" "$tmp/c.err"
mid=$(sed -n 's/^\[\(t[0-9a-f]*\)\] middle says hello$/\1/p' "$tmp/c")
gc=$(sed -n 's/^\[\(t[0-9a-f]*\)\] grandchild says hello$/\1/p' "$tmp/c")
[ -n "$mid" ] && [ -n "$gc" ] && [ "$mid" != "$gc" ]
ok $? "... which is not its parent's ($gc, parent $mid)"

# --- no launcher: GIMPI_TAG=1 from the shell, lines tagged, no mark
GIMPI_TAG=1 timeout 120 "$TASK" master 2 >"$tmp/d" 2>"$tmp/d.err"; rc=$?
[ $rc = 0 ] && [ "$(grep -Ec '^\[t[0-9a-f]+\] child [01] hello$' "$tmp/d")" = 2 ] \
    && ! grep -q $'\x1e' "$tmp/d" "$tmp/d.err"
check $? "from the shell with GIMPI_TAG=1: tagged, with no mark for a launcher (exit $rc)" \
    "$tmp/d" "$tmp/d.err"
left=$(tap_gone "gimpi-tagger|spawn_task")
[ "$left" = 0 ]; ok $? "no tagger or task left running ($left)"
exit $((failed > 0))
