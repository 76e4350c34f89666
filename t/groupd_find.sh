#!/bin/sh
# t/groupd_find.sh — where gimpi finds the groupd program (base/gimpi_findprog.h), in the
# library's auto-start and in gimpirun alike: GIMPI_GROUPD_BIN when set, else beside the
# running program, the build tree's groupd/, the bindir, PATH.  From the build tree and
# with GIMPI_GROUPD_BIN unset, a task started from the shell and a gimpirun -H job both
# find the tree's groupd; copies of the programs in a scratch folder with nothing to find
# say that no groupd program was found and name every place looked.  Every run is bounded.
. "${top_srcdir:-.}/t/tap.sh"
B=$(cd "${top_builddir:-.}" && pwd)
TASK="$B/t/pvm_job"
VMT="$B/t/vm_task"
RUN="$B/programs/gimpirun"
TO=$(command -v timeout)
unset GIMPI_GROUPD_BIN
export GIMPI_GROUPD_IDLE=2
mkdir -p "$tmp/bin"
cp "$TASK" "$RUN" "$tmp/bin/"
out=$tmp/out

echo "1..10"

# --- found from the build tree
GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_IDLE=60 "$TO" 60 "$TASK" self >"$tmp/o1" 2>"$out"
rc=$?
[ $rc = 0 ] && [ ! -s "$out" ]
okd $? "a task started from the build tree, GIMPI_GROUPD_BIN unset: groupd found and started, quietly (exit $rc)"
# the groupd it started (idle for 60 s: still there) is the build tree's
gd=$(cat "$tmp/gd.lock" 2>/dev/null)
exe=$([ -n "$gd" ] && readlink "/proc/$gd/exe")
[ "$exe" = "$B/groupd/groupd" ]; ok $? "... the build tree's groupd serves its endpoint (pid ${gd:-none}: $exe)"
[ -n "$gd" ] && kill "$gd" 2>/dev/null

GIMPI_GROUPD="ipc://$tmp/gd2" "$TO" 60 "$RUN" -H 127.0.0.1 -np 2 "$VMT" config >"$out" 2>&1
rc=$?
[ $rc = 0 ] && [ "$(count 'hosts 1 narch 1')" = 2 ]
okd $? "gimpirun -H from the build tree, GIMPI_GROUPD_BIN unset: the job's groupd found (exit $rc)"

# --- nothing to find: copies in a scratch folder, an empty PATH
GIMPI_GROUPD="ipc://$tmp/gd3" PATH=/nonexistent "$TO" 60 "$tmp/bin/pvm_job" self >"$tmp/o3" 2>"$out"
has "no groupd program to serve ipc://$tmp/gd3" && has "$tmp/bin/groupd (beside the running program)" \
    && has "$tmp/groupd/groupd (the build tree)" && has "/groupd (the bindir)" \
    && has "/nonexistent/groupd (PATH)"
okd $? "a task with nothing to find says no groupd program was found and every place looked"
has "group calls fail: no groupd program was found to serve ipc://$tmp/gd3; set GIMPI_GROUPD_BIN"
okd $? "... and the warning of its group calls names that cause and the fix, not a tid reservation"
ok $(! has "no tids reserved" && ! has "reserved no tid"; echo $?) "... and does not blame the job's tids"
GIMPI_GROUPD="ipc://$tmp/gd3b" PATH=/a:/a:/b "$TO" 60 "$tmp/bin/pvm_job" self >"$tmp/o3" 2>"$out" </dev/null
[ "$(grep -o "/a/groupd (PATH)" "$out" | wc -l)" = 1 ]
okd $? "a folder named twice on PATH is listed once among the places looked"

GIMPI_GROUPD="ipc://$tmp/gd4" GIMPI_GROUPD_BIN=/nowhere/groupd "$TO" 60 "$TASK" self \
    >"$tmp/o4" 2>"$out"
has "looked for /nowhere/groupd (GIMPI_GROUPD_BIN)" && ! has "(the bindir)"
okd $? "GIMPI_GROUPD_BIN naming nothing: the only place looked, named"

GIMPI_GROUPD="ipc://$tmp/gd5" PATH=/nonexistent "$TO" 60 "$tmp/bin/gimpirun" -H 127.0.0.1 \
    -np 1 "$VMT" config >"$out" 2>&1
rc=$?
[ $rc = 1 ] && has "gimpirun: no groupd program for the job: looked for $tmp/bin/groupd (beside the running program), $tmp/groupd/groupd (the build tree)" \
    && has "/nonexistent/groupd (PATH)"
okd $? "a gimpirun copy with nothing to find: exit $rc, every place looked named"
ok $(! has "hosts 1"; echo $?) "... and no task ran"
exit $((failed > 0))
