#!/bin/bash
# t/pvm_spawn.sh — pvm_spawn with real processes (t/spawn_task): a shell-started master
# spawns children that know their parent and siblings, pass a token round each other and
# exchange short and long messages with the master, and that pvm_tasks lists with the
# spawner as ti_ptid; their output reaches the master's
# terminal, tagged with their tid when GIMPI_TAG asks; a bare name is found on GIMPI_PATH
# first, then beside the spawner and in $HOME/pvm3/bin/LINUX64, never on PATH; a child spawns a grandchild that reaches the master through groupd; missing and
# non-executable programs, other hosts, children that die at once or are killed while
# sending give PVM's errors or failed receives, never a hang.  A private groupd serves.
set -u
top_builddir=${top_builddir:-.}
TASK="$top_builddir/t/spawn_task"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..20"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
unset GIMPI_PATH GIMPI_TAG

timeout 120 "$TASK" master 4 >"$tmp/a" 2>"$tmp/a.err"; rc=$?
[ $rc = 0 ] && grep -q "^master ok$" "$tmp/a"
check $? "master spawns 4: parent, siblings, token ring, 1 MiB both ways, ti_ptid (exit $rc)" "$tmp/a" "$tmp/a.err"
[ "$(grep -c '^child [0-3] hello$' "$tmp/a")" = 4 ] && [ "$(grep -c '^child [0-3] says on stderr$' "$tmp/a.err")" = 4 ]
check $? "children's stdout and stderr reach the master's, untagged by default" "$tmp/a" "$tmp/a.err"

timeout 120 "$TASK" master 24 >"$tmp/a24" 2>"$tmp/a24.err"; rc=$?
[ $rc = 0 ] && grep -q "^master ok$" "$tmp/a24" && ! grep -vq '^child [0-9]* says on stderr$' "$tmp/a24.err"
check $? "24 children, siblings calling each other at once: quiet, all reports in (exit $rc)" "$tmp/a24" "$tmp/a24.err"

GIMPI_TAG=1 timeout 120 "$TASK" master 6 >"$tmp/b" 2>"$tmp/b.err"; rc=$?
[ $rc = 0 ] && [ "$(grep -Ec '^\[t[0-9a-f]+\] child [0-5] hello$' "$tmp/b")" = 6 ] \
    && [ "$(grep -Ec '^\[t[0-9a-f]+\] child [0-5] says on stderr$' "$tmp/b.err")" = 6 ] \
    && grep -q "^master ok$" "$tmp/b"
check $? "GIMPI_TAG=1: each child line prefixed with its tid in hex, lines whole (exit $rc)" "$tmp/b" "$tmp/b.err"

mkdir -p "$tmp/path"
ln -s "$(cd "$(dirname "$TASK")" && pwd)/$(basename "$TASK")" "$tmp/path/spawn_alias"
GIMPI_PATH="/nonexistent:$tmp/path" timeout 120 "$TASK" master 2 spawn_alias >"$tmp/c" 2>"$tmp/c.err"; rc=$?
[ $rc = 0 ] && grep -q "^master ok$" "$tmp/c"
check $? "a bare name found on GIMPI_PATH (exit $rc)" "$tmp/c" "$tmp/c.err"

timeout 120 "$TASK" master 1 "$(dirname "$TASK")/spawn_task" >"$tmp/d" 2>"$tmp/d.err"; rc=$?
[ $rc = 0 ] && grep -q "^master ok$" "$tmp/d"
check $? "a relative path with a slash (exit $rc)" "$tmp/d" "$tmp/d.err"

printf '#!/bin/sh\nexit 0\n' >"$tmp/noexec"; chmod 644 "$tmp/noexec"
timeout 120 "$TASK" failures "$tmp/noexec" >"$tmp/e" 2>"$tmp/e.err"; rc=$?
[ $rc = 0 ] && grep -q "^failures ok$" "$tmp/e"
check $? "missing, not executable, other host, dies at once, killed while sending (exit $rc)" "$tmp/e" "$tmp/e.err"
! grep -q "gimpi: spawn: no program" "$tmp/e.err"
check $? "... and with PvmAutoErr 0 a missing program is PvmNoFile without a line on stderr" "$tmp/e.err"

timeout 120 "$TASK" nested >"$tmp/f" 2>"$tmp/f.err"; rc=$?
[ $rc = 0 ] && grep -q "^nested ok$" "$tmp/f"
check $? "a grandchild reaches the master through groupd; its ti_ptid is its parent (exit $rc)" "$tmp/f" "$tmp/f.err"

timeout 120 "$RUN" -np 3 "$TASK" job >"$tmp/g" 2>"$tmp/g.err"; rc=$?
[ $rc = 0 ] && grep -q "^job ok$" "$tmp/g"
check $? "a child spawned by a gimpirun task talks to every task of the job (exit $rc)" "$tmp/g" "$tmp/g.err"

# a bare name is looked for where PVM's ep path is, never on PATH (issue 24 point 7)
mkdir -p "$tmp/pbin" "$tmp/home/pvm3/bin/LINUX64"
printf '#!/bin/sh\ntouch "%s/ran"\n' "$tmp" >"$tmp/pbin/gimpi-pathprobe"
chmod 755 "$tmp/pbin/gimpi-pathprobe"
PATH="$tmp/pbin:$PATH" timeout 60 "$TASK" pathonly gimpi-pathprobe nofile >"$tmp/p" 2>"$tmp/p.err"
rc=$?
[ $rc = 0 ] && grep -q "^pathonly ok$" "$tmp/p" && [ ! -e "$tmp/ran" ]
check $? "a program on PATH only is not spawned: PvmNoFile, not run (exit $rc)" "$tmp/p" "$tmp/p.err"
grep -q "gimpi: spawn: no program gimpi-pathprobe: looked for GIMPI_PATH (unset), .*/gimpi-pathprobe (the spawner's folder), .*/pvm3/bin/LINUX64/gimpi-pathprobe (PVM's default ep); PATH is not searched" "$tmp/p.err"
check $? "... and the message names every place looked and that PATH is not" "$tmp/p.err"
timeout 60 "$TASK" pathonly true nofile >"$tmp/p2" 2>"$tmp/p2.err"
grep -q "^pathonly ok$" "$tmp/p2"
check $? "a system program's name (true, in /usr/bin) is not spawned from PATH" "$tmp/p2" "$tmp/p2.err"
PATH="$tmp/pbin:$PATH" timeout 60 "$RUN" -H 127.0.0.1 -np 1 "$TASK" pathonly gimpi-pathprobe \
    nofile >"$tmp/p4" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^pathonly ok$" "$tmp/p4" && [ ! -e "$tmp/ran" ] \
    && grep -Eq "gimpirun: no program gimpi-pathprobe on host 127.0.0.1: looked for .*/t/gimpi-pathprobe \\((GIMPI_PATH|the spawner's folder)\\),.*; PATH is not searched" "$tmp/p4"
check $? "the same through a virtual machine's manager: PvmNoFile, the places named (exit $rc)" "$tmp/p4"
mkdir -p "$tmp/ep"
printf '#!/bin/sh\ntouch "%s/ran-ep"\n' "$tmp" >"$tmp/ep/gimpi-epprobe"
chmod 755 "$tmp/ep/gimpi-epprobe"
echo "127.0.0.1 ep=$tmp/ep" >"$tmp/hosts.ep"
timeout 60 "$RUN" -hostfile "$tmp/hosts.ep" -np 1 "$TASK" pathonly gimpi-epprobe runs . \
    >"$tmp/p5" 2>&1
rc=$?
for _ in $(seq 1 500); do [ -e "$tmp/ran-ep" ] && break; sleep 0.02; done
[ $rc = 0 ] && grep -q "^pathonly ok$" "$tmp/p5" && [ -e "$tmp/ran-ep" ]
check $? "the hostfile's ep= of the master's own host is where its own spawns look (exit $rc)" "$tmp/p5"
cp "$tmp/pbin/gimpi-pathprobe" "$tmp/home/pvm3/bin/LINUX64/"
HOME="$tmp/home" timeout 60 "$TASK" pathonly gimpi-pathprobe runs >"$tmp/p3" 2>"$tmp/p3.err"
for _ in $(seq 1 500); do [ -e "$tmp/ran" ] && break; sleep 0.02; done
grep -q "^pathonly ok$" "$tmp/p3" && [ -e "$tmp/ran" ]
check $? "a bare name in \$HOME/pvm3/bin/LINUX64 (PVM's default ep) is found and run" "$tmp/p3" "$tmp/p3.err"

GIMPI_TAG=1 timeout 120 "$TASK" orphan >"$tmp/h" 2>"$tmp/h.err"
for _ in $(seq 1 1500); do grep -q "orphan ok" "$tmp/h" && break; sleep 0.02; done
grep -Eq '^\[t[0-9a-f]+\] orphan ok$' "$tmp/h"
check $? "a tagged child waiting for its parent fails when the parent is killed" "$tmp/h" "$tmp/h.err"

GIMPI_GROUPD="ipc://$tmp/nobody" GIMPI_GROUPD_BIN=/bin/false timeout 60 "$TASK" master 1 >"$tmp/i" 2>"$tmp/i.err"
grep -q "spawned -14 of 1" "$tmp/i" && grep -q "pvm_spawn(): Can't contact local daemon" "$tmp/i.err"
check $? "without groupd pvm_spawn fails with PvmSysErr and PVM's message" "$tmp/i" "$tmp/i.err"

left=$(tap_gone "$(basename "$TASK") (child|die|killme|nested|grandchild)")
[ "$left" = 0 ]; ok $? "no child left running ($left)"
exit $((failed > 0))
