#!/bin/bash
# t/console.sh — the console, gimpi(1), against a groupd of its own and real tasks started
# from the shell (t/vm_task wait): conf shows this host; ps -a lists the tasks with their
# tids and command and not the console (ps -x does); pstat; config shows the console's
# environment variables and a task's; kill ends one (the process ends, ps no longer lists
# it); spawn starts a task that ps lists, with the console as its parent (ps -l); bad
# commands, bad tids and bad arguments fail with a message and a non-zero exit; add
# without a virtual machine says what is needed;
# commands piped on stdin, and the interactive prompt on a pty; halt ends every task and
# groupd (the processes are gone), after which the console says there is no groupd.
# Synchronised on the tasks' "ready" lines and on process ends, every wait bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
G="$top_builddir/programs/gimpi"
# a copy of t/vm_task under a name of its own (other tests may end every "vm_task")
TASK="$tmp/console_task"
cp "$top_builddir/t/vm_task" "$TASK"
echo "1..31"
export GIMPI_GROUPD="ipc://$tmp/gd"
unset GIMPI_GROUPD_IDLE

# waits (at most 10 s) until process $1 has ended (gone, or a zombie nobody reaps yet)
gone() {
    local i
    for i in $(seq 1 200); do
        [ -e "/proc/$1" ] || return 0
        [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
        sleep 0.05
    done
    return 1
}
# waits (at most 10 s) until `gimpi ps -a` does ($2 = yes) or does not ($2 = no) list tid $1
listed() {
    local i
    for i in $(seq 1 200); do
        if "$G" ps -a 2>/dev/null | awk '{print $2}' | grep -qx "$1"; then
            [ "$2" = yes ] && return 0
        else
            [ "$2" = no ] && return 0
        fi
        sleep 0.05
    done
    return 1
}

# a groupd of the test's own (halt ends it), ready once it prints its endpoint
mkfifo "$tmp/gd.fifo"
"$top_builddir/groupd/groupd" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.fifo" 2>"$tmp/gd.err" &
gdpid=$!
exec 3<"$tmp/gd.fifo"
read -r -t 10 ep <&3
[ "$ep" = "$GIMPI_GROUPD" ]
ok $? "groupd serves $GIMPI_GROUPD"

# two tasks started from the shell
start_task() {
    mkfifo "$tmp/$1.fifo"
    timeout 120 "$TASK" wait >"$tmp/$1.fifo" 2>"$tmp/$1.err" &
    eval "${1}pid=$!"
    exec {fd}<"$tmp/$1.fifo"
    read -r -t 30 line <&$fd
    eval "${1}tid=\${line#ready t}"
}
start_task a
start_task b
[ -n "$atid" ] && [ -n "$btid" ] && [ "$atid" != "$btid" ]
ok $? "two tasks started from the shell: t$atid t$btid"

# conf
out=$("$G" conf 2>&1); rc=$?
host=$(hostname)
[ $rc = 0 ] && echo "$out" | grep -q '^1 host, 1 data format$' &&
    echo "$out" | grep -Eq "^ *$host +[0-9a-f]+ +LINUX64 +1000 0x00408c41$"
ok $? "conf: one host, this one ($host)"
[ $rc = 0 ] || echo "$out" | sed 's/^/# /'

# ps -a, ps -x, ps -l
out=$("$G" ps -a 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | head -1 | grep -q '^ *HOST  *TID  *FLAG 0x COMMAND$' &&
    echo "$out" | grep -Eq "^ *$host +$atid +4/c +console_task *$" &&
    echo "$out" | grep -Eq "^ *$host +$btid +4/c +console_task *$"
ok $? "ps -a: both tasks with host, tid, flag, command"
[ $rc = 0 ] || echo "$out" | sed 's/^/# /'
! echo "$out" | grep -Eq '\(cons\)| gimpi *$'
ok $? "ps -a does not list the console"
"$G" ps -x | grep -Eq '^ *[^ ]+ +\(cons\) +4/c +gimpi *$'
ok $? "ps -x lists the console as (cons)"
achild=$(pgrep -P "$apid")
"$G" ps -al | grep -Eq "^ *$host +$atid +- +$achild +4/c +console_task *$"
ok $? "ps -l: parent and pid"

# pstat, mstat, id, version
out=$("$G" pstat "t$atid" 7ffffff 2>&1)
[ "$out" = "$(printf 't%8s  run\nt 7ffffff  No such task' "$atid")" ]
ok $? "pstat: run and No such task"
out=$("$G" mstat "$host" nohost.invalid 2>&1)
echo "$out" | grep -Eq "^ *$host  ok$" && echo "$out" | grep -Eq '^ *nohost.invalid  No such host$'
ok $? "mstat: ok and No such host"
"$G" id | grep -Eq '^t[0-9a-f]+$'
ok $? "id: the console's tid"
"$G" version | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$'
ok $? "version"

# config: the console's own variables, and a task's of this host
GIMPI_LINK_TIMEOUT=17 "$G" config | grep -Eq '^GIMPI_LINK_TIMEOUT +environment +17 s$'
ok $? "config: the console's environment"
"$G" config "t$btid" | grep -Eq "^GIMPI_GROUPD +environment +ipc://$tmp/gd\$"
ok $? "config t$btid: what the task was started with"
out=$("$G" config t7ffffff 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "config: t7ffffff: No such task" ]
ok $? "config of an unknown tid: message, exit $rc"

# kill: the task ends and leaves ps
"$G" kill "t$atid"; rc=$?
[ $rc = 0 ] && gone "$achild" && gone "$apid"
ok $? "kill t$atid: its process ended (kill exit $rc)"
listed "$atid" no
ok $? "ps no longer lists t$atid"

# errors
out=$("$G" kill t7ffffff 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "kill: t7ffffff: No such task" ]
ok $? "kill of an unknown tid: message, exit $rc"
out=$("$G" kill xyz 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "kill: xyz: not a task id" ]
ok $? "kill of something that is no tid: message, exit $rc"
out=$("$G" kill 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "kill: wrong #args" ]
ok $? "kill without tids: wrong #args, exit $rc"
out=$("$G" frobnicate 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "frobnicate: not found" ]
ok $? "an unknown command: not found, exit $rc"
out=$("$G" add nohost.invalid 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q 'gimpirun -H'
ok $? "add without a virtual machine says a gimpirun -H job is needed (exit $rc)"

# spawn
# (the child inherits the console's stdout: a file, not a pipe that would stay open)
# (id first: the spawning console's tid, the spawned task's parent)
printf 'id\nspawn -1 %s wait\n' "$TASK" | "$G" >"$tmp/spawn.out" 2>&1; rc=$?
out=$(grep -v '^ready' "$tmp/spawn.out")
ctid=$(echo "$out" | sed -n '1s/^t\([0-9a-f]*\)$/\1/p')
stid=$(echo "$out" | sed -n '2,$s/^t\([0-9a-f]*\)$/\1/p')
[ $rc = 0 ] && [ "$(echo "$out" | sed -n 2p)" = "1 successful" ] && [ -n "$stid" ] && [ -n "$ctid" ]
ok $? "spawn -1: 1 successful, t$stid (spawned by the console t$ctid)"
[ $rc = 0 ] || sed 's/^/# /' "$tmp/spawn.out"
spid=$("$G" ps -al | awk -v t="$stid" '$2 == t {print $4}')
[ -n "$spid" ] && [ -e "/proc/$spid" ]
ok $? "ps lists the spawned task at once, with its process ($spid)"
# once the task is past its enrolment (its ready line), ps -l shows its parent and flag f
for _ in $(seq 1 200); do grep -qx "ready t$stid" "$tmp/spawn.out" && break; sleep 0.05; done
line=$("$G" ps -al 2>&1 | awk -v t="$stid" '$2 == t')
echo "$line" | grep -Eq "^ *$host +$stid +$ctid +$spid +6/c,f +console_task *$"
ok $? "ps -l: the spawned task's parent is the console that spawned it, flag 6/c,f" ||
    echo "# $line"
out=$("$G" spawn "$tmp/no-such-program" 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "$(printf '0 successful\nNo such file')" ]
ok $? "spawn of a missing program: No such file, exit $rc"

# piped and interactive
out=$(printf 'conf\nps -a\n' | "$G" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q '^1 host' && echo "$out" | grep -Eq " $btid +4/c"
ok $? "commands piped on stdin, no prompt"
printf 'version\nfrobnicate\n' | "$G" >/dev/null 2>&1
[ $? = 1 ]
ok $? "piped commands of which one failed: exit 1"
if command -v script >/dev/null; then
    out=$( (printf 'version\n'; printf 'quit\n') | timeout 20 script -qec "$G" /dev/null 2>&1 | tr -d '\r')
    echo "$out" | grep -q '^gimpi> .*version' && echo "$out" | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$'
    ok $? "interactive on a pty: prompt, command, answer"
else
    ok 0 "# SKIP script(1) missing: no pty"
fi

# halt: every task and groupd end
out=$("$G" halt 2>&1); rc=$?
[ $rc = 0 ] && [ -z "$out" ]
ok $? "halt: exit 0, nothing printed"
[ -n "$out" ] && echo "$out" | sed 's/^/# /'
gone "$bpid" && gone "$spid" && gone "$gdpid"
ok $? "halt ended the shell task, the spawned task and groupd"
out=$("$G" ps 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q "no groupd at $GIMPI_GROUPD"
ok $? "after halt: no groupd, exit $rc"
exec 3<&-
exit $((failed > 0))
