#!/bin/bash
# t/pvm_getfds_restart.sh — a program polling pvm_getfds' descriptor learns of a lost
# groupd (t/pvm_getfds.c, its `restart` case): a groupd of its own, started on first use
# with a journal, that the program kills while it waits in poll(); the descriptor wakes,
# the receive that follows restarts groupd from the journal and moves the program's
# watches to it, and the child's end, which the new groupd publishes, arrives.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
export GIMPI_GROUPD="ipc://$tmp/gd/groupd" GIMPI_GROUPD_BIN="$top_builddir/groupd/groupd"
mkdir -m 700 "$tmp/gd"
timeout 120 "$top_builddir/t/pvm_getfds" restart
rc=$?
pid=$(cat "$tmp/gd/groupd.lock" 2>/dev/null); [ -n "$pid" ] && kill "$pid" 2>/dev/null
exit $rc
