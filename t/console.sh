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
# spawn's failed slots name the program and host; spawn -> prints PVM's console format
# ([N], [N:tTID] lines, EOF, [N] finished); a child whose console was killed before it
# called it is quiet (GIMPI_DEBUG=1 says why).  gimpirun jobs are found without -e through
# their run files (stale ones removed), several are listed with -j PID, -j picks one.
# Synchronised on the tasks' "ready" lines and on process ends, every wait bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
G="$top_builddir/programs/gimpi"
# a copy of t/vm_task under a name of its own (other tests may end every "vm_task")
TASK="$tmp/console_task"
cp "$top_builddir/t/vm_task" "$TASK"
CHILD="$top_builddir/t/console_child"
echo "1..50"
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
[ $rc != 0 ] && [ "$out" = "$(printf '0 successful\nNo such file: %s on host %s' "$tmp/no-such-program" "$host")" ]
ok $? "spawn of a missing program: No such file, with its name and host, exit $rc" ||
    echo "$out" | sed 's/^/# /'

# spawn ->: PVM's console format, a job number, the program and host in each failed slot
out=$("$G" spawn -2 -\> no-such-program 2>&1); rc=$?
want=$(printf '[1]\n0 successful\nNo such file: no-such-program on host %s\nNo such file: no-such-program on host %s' "$host" "$host")
[ $rc != 0 ] && [ "$out" = "$want" ]
ok $? "spawn -2 -> of a missing program: [1], then No such file with name and host per slot" ||
    echo "$out" | sed 's/^/# /'
out=$("$G" spawn -nohost.invalid "$CHILD" hello 2>&1); rc=$?
[ $rc != 0 ] && [ "$out" = "$(printf '0 successful\nNo such host: nohost.invalid')" ]
ok $? "spawn onto a host that is not there: No such host, with its name" ||
    echo "$out" | sed 's/^/# /'
out=$(timeout 30 "$G" spawn -2 -\> "$CHILD" hello 2>&1); rc=$?
t1=$(echo "$out" | sed -n 3p | sed -n 's/^t\([0-9a-f]*\)$/\1/p')
t2=$(echo "$out" | sed -n 4p | sed -n 's/^t\([0-9a-f]*\)$/\1/p')
# job_lines JOB TID HOST: $out has the task's two lines and EOF, after the spawn's lines
job_lines() {
    echo "$out" | grep -qx "\[$1:t$2\] hello from $3" &&
    echo "$out" | grep -qx "\[$1:t$2\] to stderr from $3" &&
    echo "$out" | grep -qx "\[$1:t$2\] EOF" &&
    [ "$(echo "$out" | grep -n "^\[$1:t$2\]" | head -1 | sed 's/:.*//')" -gt 4 ]
}
[ $rc = 0 ] && [ "$(echo "$out" | sed -n 1,2p)" = "$(printf '[1]\n2 successful')" ] &&
    [ -n "$t1" ] && [ -n "$t2" ] && [ "$(echo "$out" | tail -1)" = "[1] finished" ] &&
    job_lines 1 "$t1" "$host" && job_lines 1 "$t2" "$host"
ok $? "spawn -2 -> FILE: [1], the tids, then [1:tTID] lines (stdout and stderr), EOF, [1] finished" ||
    echo "$out" | sed 's/^/# /'
! echo "$out" | grep -q BEGIN
ok $? "spawn ->: no BEGIN lines (PVM's console prints none)"
out=$(printf 'spawn -> %s hello\nspawn -> %s hello\n' "$CHILD" "$CHILD" | timeout 30 "$G" 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -qx '\[1\] finished' && echo "$out" | grep -qx '\[2\] finished' &&
    echo "$out" | grep -Eqx "\[2:t[0-9a-f]+\] hello from $host"
ok $? "piped spawns ->: jobs [1] and [2], each finished" || echo "$out" | sed 's/^/# /'

# a task whose spawning console has exited is quiet about it (GIMPI_DEBUG says it)
for dbg in 0 1; do
    rm -f "$tmp/go.fifo"
    mkfifo "$tmp/go.fifo"
    GIMPI_DEBUG=$dbg "$G" spawn "$CHILD" parent "$tmp/go.fifo" >"$tmp/orphan.out" 2>&1 &
    cpid=$!
    # the child waits for the fifo before it enrols: the console is killed first
    timeout 20 bash -c 'exec 7>"$1"; kill -9 "$2"; echo go >&7' _ "$tmp/go.fifo" "$cpid"
    wait "$cpid" 2>/dev/null
    for _ in $(seq 1 200); do grep -q '^sent' "$tmp/orphan.out" && break; sleep 0.05; done
    # (the call is refused, or, while the console is still dying, reset after connecting)
    refused=$(grep -Ec 'connect: Connection refused|closed the connection before its challenge' \
        "$tmp/orphan.out")
    if [ $dbg = 0 ]; then
        grep -q '^sent' "$tmp/orphan.out" && [ "$refused" = 0 ]
        ok $? "a child whose console has exited calls it quietly (no 'connect: Connection refused')" ||
            sed 's/^/# /' "$tmp/orphan.out"
    else
        grep -q '^sent' "$tmp/orphan.out" && [ "$refused" != 0 ]
        ok $? "... and with GIMPI_DEBUG=1 says why the call failed" ||
            grep -v '^gimpi\[t[0-9a-f]*\] [a-z]' "$tmp/orphan.out" | head -5 | sed 's/^/# /'
    fi
done

# a gimpirun job found without -e: its run file in the private runtime directory
RD="$tmp/rd"
mkdir -m 700 "$RD"
RUN="$top_builddir/programs/gimpirun"
STAT="$top_builddir/programs/gimpi-stat"
# start_job NAME: a one-task gimpirun job with a groupd at ipc://$tmp/NAME.gd (not the
# console's default), ready once its task is; ${NAME}tid, ${NAME}pid (gimpirun's)
start_job() {
    mkfifo "$tmp/$1.fifo"
    XDG_RUNTIME_DIR=$RD GIMPI_GROUPD="ipc://$tmp/$1.gd" timeout 120 "$RUN" -np 1 "$TASK" wait \
        >"$tmp/$1.fifo" 2>"$tmp/$1.err" &
    exec {fd}<"$tmp/$1.fifo"
    read -r -t 30 line <&$fd
    eval "${1}tid=\${line#ready t}"
    eval "${1}fd=$fd"
    local f
    for _ in $(seq 1 200); do
        f=$(grep -l "endpoint ipc://$tmp/$1.gd\$" "$RD"/gimpi/jobs/* 2>/dev/null) && break
        sleep 0.05
    done
    eval "${1}pid=${f##*/}"
}
# gimpi without -e or GIMPI_GROUPD, in that runtime directory
C() { env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$G" "$@"; }
start_job ja
f="$RD/gimpi/jobs/$japid"
[ -n "$japid" ] && [ "$(stat -c %a "$f")" = 600 ] && [ "$(stat -c %a "$RD/gimpi/jobs")" = 700 ] &&
    grep -qx "endpoint ipc://$tmp/ja.gd" "$f" && grep -qx "gimpirun $japid [0-9]*" "$f"
ok $? "gimpirun keeps a run file (0600, in a 0700 folder) naming its pid and groupd"
out=$(C ps -a 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -Eq "^ *$host +$jatid +4/c +console_task *$"
ok $? "gimpi with no -e finds the running job's groupd: ps -a lists its task" ||
    echo "$out" | sed 's/^/# /'
out=$(env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$STAT" 2>&1); rc=$?
[ $rc = 0 ] && [ "$out" = "no groups exist" ]
ok $? "gimpi-stat with no endpoint asks the running job's groupd" || echo "$out" | sed 's/^/# /'
# stale files: a gimpirun that is gone, and a pid that runs but started at another time
sh -c 'exit 0' &
dead=$!
wait $dead
printf 'gimpirun %d 1\nendpoint ipc://%s/dead.gd\nhosts 1\ncommand x\n' "$dead" "$tmp" \
    >"$RD/gimpi/jobs/$dead"
printf 'gimpirun %d 1\nendpoint ipc://%s/reused.gd\nhosts 1\ncommand x\n' "$$" "$tmp" \
    >"$RD/gimpi/jobs/$$"
: >"$RD/gimpi/jobs/$dead.sock"
: >"$RD/gimpi/jobs/$dead.new"
out=$(C ps -a 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q " $jatid " && [ ! -e "$RD/gimpi/jobs/$dead" ] &&
    [ ! -e "$RD/gimpi/jobs/$$" ] && [ ! -e "$RD/gimpi/jobs/$dead.sock" ] &&
    [ ! -e "$RD/gimpi/jobs/$dead.new" ]
ok $? "the run files (and sockets) of a dead gimpirun and of a reused pid are ignored and removed" ||
    echo "$out" | sed 's/^/# /'
start_job jb
out=$(C ps -a 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q '2 gimpirun jobs run' &&
    echo "$out" | grep -Eq "^ +-j $japid +ipc://$tmp/ja.gd  1 host  .*console_task wait$" &&
    echo "$out" | grep -Eq "^ +-j $jbpid +ipc://$tmp/jb.gd  1 host  .*console_task wait$"
ok $? "two jobs: the console lists them with their -j PID and does not guess (exit $rc)" ||
    echo "$out" | sed 's/^/# /'
# (both groupds number from the same tid: the tasks differ by their process)
out=$(C -j "$jbpid" ps -al 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | awk '{print $4}' | grep -qx "$(pgrep -P "$jbpid")" &&
    ! echo "$out" | awk '{print $4}' | grep -qx "$(pgrep -P "$japid")"
ok $? "-j PID: that job's groupd" || echo "$out" | sed 's/^/# /'
out=$(env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$STAT" 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q 'choose one with --job PID' &&
    echo "$out" | grep -Eq "^ +--job $jbpid +ipc://$tmp/jb.gd "
ok $? "gimpi-stat lists the two jobs with their --job PID" || echo "$out" | sed 's/^/# /'
out=$(env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$STAT" --job "$japid" 2>&1); rc=$?
[ $rc = 0 ]
ok $? "gimpi-stat --job PID" || echo "$out" | sed 's/^/# /'
out=$(C -j 1 ps 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q '^gimpi: -j 1: no gimpirun job of that pid runs'
ok $? "-j of a pid that runs no job: a message, the jobs that do (exit $rc)" ||
    echo "$out" | sed 's/^/# /'
out=$(C -j "$japid" halt 2>&1); rc=$?
for _ in $(seq 1 200); do [ -e "$RD/gimpi/jobs/$japid" ] || break; sleep 0.05; done
[ $rc = 0 ] && [ ! -e "$RD/gimpi/jobs/$japid" ] && [ ! -e "$RD/gimpi/jobs/$japid.sock" ]
ok $? "halt of job -j $japid: its gimpirun ended and removed its run file" ||
    echo "$out" | sed 's/^/# /'
out=$(C ps -a 2>&1); rc=$?
[ $rc = 0 ] && echo "$out" | grep -q " $jbtid "
ok $? "one job left: found again without -j"
C halt >/dev/null 2>&1
[ -z "$(grep -v '^ready' <&"$jafd")" ] && [ -z "$(grep -v '^ready' <&"$jbfd")" ] &&
    ! grep -Eq 'groupd|ipc:|jobs/' "$tmp/ja.err" "$tmp/jb.err"
ok $? "gimpirun printed nothing of its own about it (a quiet run keeps stdout clean)"
exec {jafd}<&- {jbfd}<&-

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
