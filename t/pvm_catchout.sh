#!/bin/bash
# t/pvm_catchout.sh — pvm_catchout(stdout) compared line by line with the lines PVM 3.4.6
# writes for the same program (t/catchout_task, scenarios measured under PVM and written
# down in doc/pvm-differences.md): "[t<tid>] BEGIN", every line of stdout and stderr with
# the prefix (an unfinished last line, a line written in two pieces, an empty line),
# "[t<tid>] EOF"; a child that kills itself or is killed by pvm_kill; a grandchild caught
# by the master; pvm_catchout(0) dropping the rest; PvmShowTids 0; pvm_exit waiting for
# the children's EOF with PVM's message.  Tids differ from PVM's: each child's lines are
# compared with the expected ones for the tid the master printed.  A private groupd.
set -u
top_builddir=${top_builddir:-.}
TASK="$top_builddir/t/catchout_task"
RUN="$top_builddir/programs/gimpirun"
GROUPD="$top_builddir/groupd/groupd"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..12"
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN="$GROUPD"
timeout 300 "$GROUPD" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.out" 2>&1 &
for _ in $(seq 1 500); do [ -s "$tmp/gd.out" ] && break; sleep 0.02; done
[ "$(head -1 "$tmp/gd.out")" = "$GIMPI_GROUPD" ]; ok $? "private groupd serves $GIMPI_GROUPD"
unset GIMPI_PATH GIMPI_TAG

# run SCENARIO [launcher...]: the master's stdout in $tmp/SCENARIO, stderr in .err
run() { local s=$1; shift; timeout 60 "$@" "$TASK" master "$s" >"$tmp/$s" 2>"$tmp/$s.err"; }
# mtid SCENARIO: the master's tid
mtid() { sed -n 's/^master \(t[0-9a-f]*\)$/\1/p' "$tmp/$1"; }
# tids SCENARIO: the children's tids the master printed
tids() { sed -n 's/^spawned [0-9]*: *//p' "$tmp/$1"; }
# same SCENARIO TID: TID's lines equal stdin with TID put in (diff shown when not)
same() {
    sed "s/TID/$2/g" >"$tmp/want"
    grep "^\[$2\] " "$tmp/$1" >"$tmp/got"
    diff "$tmp/want" "$tmp/got" >"$tmp/diff" || { sed 's/^/# /' "$tmp/diff" "$tmp/$1" "$tmp/$1.err"; return 1; }
}
# the line number of the first line of SCENARIO that is exactly TEXT
at() { grep -nxF -- "$2" "$tmp/$1" | head -1 | cut -d: -f1; }
# PVM's lines of a child that writes two lines, one to stderr and one without a newline
plain() { printf '[TID] BEGIN\n[TID] hello from TID\n[TID] second line\n[TID] to stderr\n[TID] no newline at end\n[TID] EOF\n'; }
# the only libpvm line on stderr is PVM's own, when pvm_exit has to wait
waited() { ! grep '^libpvm' "$tmp/$1.err" | grep -vxq "libpvm \[$(mtid "$1")\]: child task(s) still running.  waiting..."; }

run two "$RUN" -np 1
set -- $(tids two)
ok=0
[ $# = 2 ] && same two "$1" < <(plain) && same two "$2" < <(plain) || ok=1
last=$(tail -1 "$tmp/two")
[ $# = 2 ] && [ "$last" = "after pvm_exit" ] && [ "$(at two "[$1] EOF")" -lt "$(at two "$last")" ] \
    && [ "$(at two "[$2] EOF")" -lt "$(at two "$last")" ] || ok=1
[ "$(grep -vc '^\[t' "$tmp/two")" = 4 ] && waited two || ok=1
ok $ok "two children under gimpirun: each child's lines as PVM's, BEGIN to EOF, before pvm_exit returns"
[ $ok = 0 ] || sed 's/^/# /' "$tmp/two" "$tmp/two.err"

run partial
t=$(tids partial)
printf '[TID] BEGIN\n[TID] part1 part2\n[TID] \n[TID] EOF\n' | same partial $t
ok $? "a line written in two pieces is one line; an empty line keeps its prefix"

run kill
t=$(tids kill)
printf '[TID] BEGIN\n[TID] before kill\n[TID] unterminated\n[TID] EOF\n' | same kill $t
ok $? "a child that kills itself: its unfinished line, then EOF"

run pvmkill
t=$(tids pvmkill)
printf '[TID] BEGIN\n[TID] waiting to be killed\n[TID] EOF\n' | same pvmkill $t \
    && [ "$(at pvmkill "[$t] EOF")" -lt "$(at pvmkill "after pvm_exit")" ]
ok $? "a child ended by pvm_kill: EOF before pvm_exit returns"

run grand
c=$(tids grand)
g=$(sed -n "s/^\[$c\] spawned grandchild //p" "$tmp/grand")
printf '[TID] BEGIN\n[TID] parent of grandchild\n[TID] spawned grandchild %s\n[TID] EOF\n' "$g" | same grand $c
ok $? "a child that spawns: its own lines"
[ -n "$g" ] && plain | same grand "$g" \
    && [ "$(at grand "[$g] BEGIN")" -lt "$(at grand "[$c] spawned grandchild $g")" ] \
    && [ "$(at grand "[$g] EOF")" -lt "$(at grand "after pvm_exit")" ]
ok $? "the grandchild's output is caught by the master too, BEGIN when it is spawned"

run off
t=$(tids off)
printf '[TID] BEGIN\n' | same off $t && grep -qx 'catchout off' "$tmp/off" \
    && grep -qx 'after pvm_exit' "$tmp/off" && ! grep -q 'slow line' "$tmp/off" "$tmp/off.err"
ok $? "pvm_catchout(0): the rest of a running child's output is dropped, pvm_exit does not wait"

run notids
t=$(tids notids)
grep -vx -e "master $(mtid notids)" -e "spawned 1: $t" -e 'master exiting' \
    -e 'after pvm_exit' "$tmp/notids" >"$tmp/nt"
printf 'hello from %s\nsecond line\nto stderr\nno newline at end\n' "$t" | diff - "$tmp/nt" >"$tmp/diff" \
    && ! grep -q '^\[t' "$tmp/notids"
ok $? "PvmShowTids 0: the lines alone, no BEGIN or EOF" || sed 's/^/# /' "$tmp/diff"

run wait
t=$(tids wait)
printf '[TID] BEGIN\n[TID] slow line after 1s\n[TID] EOF\n' | same wait $t \
    && [ "$(at wait "[$t] EOF")" -lt "$(at wait "after pvm_exit")" ] \
    && grep -qx "libpvm \[$(mtid wait)\]: child task(s) still running.  waiting..." "$tmp/wait.err"
ok $? "pvm_exit waits for a slow child's output, saying so as PVM does"

start=$(date +%s%N)
GIMPI_CATCHOUT_WAIT=1 run bound; rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ $rc = 0 ] && grep -qx 'after pvm_exit' "$tmp/bound" && [ $ms -lt 20000 ] \
    && grep -q "the output of 1 child task(s) had not ended after 1 s" "$tmp/bound.err"
ok $? "GIMPI_CATCHOUT_WAIT bounds pvm_exit's wait for a child that never ends (exit $rc, $ms ms)"

left=$(tap_gone "$(basename "$TASK") child")
[ "$left" = 0 ]; ok $? "no child left running ($left)"
exit $((failed > 0))
