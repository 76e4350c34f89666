#!/bin/bash
# t/vm_console.sh — the console, gimpi(1), against a job that spans hosts: two emulated
# hosts reached by the real OpenSSH (t/vmhosts.sh).  gimpirun runs a job on h0 and h1,
# its groupd on tcp, its key a file of its own; from "another terminal" on h0 (the same
# runtime directory, no -e, no GIMPI_GROUPD, no key variable) the console finds that
# groupd and its key file through the job's run file: conf lists
# both hosts, ps -a the tasks on both, gimpi-stat answers.  `spawn -> FILE` onto h1
# brings the child's lines (stdout and stderr), EOF and "[1] finished" to the console in
# PVM's console format, and none of them to gimpirun's output; a program missing on h1
# fails naming the program and the host.  The console's halt ends the job, whose
# gimpirun removes its run file.  Every wait is bounded; nothing sleeps to synchronise.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

vm_begin 2
G="$B/programs/gimpi"
T="$B/t/vm_task"
CHILD="$B/t/console_child"
RD="$VM_DIR/rd"
mkdir -m 700 "$RD"
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts"

# C ARGS...: the console on h0, as from another terminal: no -e, no GIMPI_GROUPD
C() {
    vm_exec 0 env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 60 "$G" "$@"
}

echo "1..11"

# the job's key is a file of its own: the console, which is not told, must take it from
# the run file, or the job's groupd refuses it
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$VM_DIR/jobkey"; echo >>"$VM_DIR/jobkey"
chmod 600 "$VM_DIR/jobkey"
vm_exec 0 env XDG_RUNTIME_DIR="$RD" GIMPI_KEY_FILE="$VM_DIR/jobkey" GIMPI_RSH="$VM_SSH" \
    GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
    timeout -k 10 120 "$RUN" -hostfile "$VM_DIR/hosts" -np 2 "$T" wait >"$out" 2>&1 &
job=$!
for _ in $(seq 1 300); do [ "$(count ready)" = 2 ] && break; kill -0 $job 2>/dev/null || break; sleep 0.1; done
okd $([ "$(count ready)" = 2 ]; echo $?) "a job of two tasks on two hosts runs"
jobfile=$(ls "$RD"/gimpi/jobs/[0-9]* 2>/dev/null | grep -v '\.sock$')
ok $(grep -Eq '^endpoint tcp://' "$jobfile" && grep -qx 'hosts 2' "$jobfile" &&
     grep -qx "key $VM_DIR/jobkey" "$jobfile" && ! grep -qf "$VM_DIR/jobkey" "$jobfile"; echo $?) "its run file names its tcp groupd, 2 hosts and the key file (not the key)"

c=$(C conf 2>&1)
ok $(echo "$c" | grep -q '^2 hosts, 1 data format$' && echo "$c" | grep -Eq "^ *$H1 +[0-9a-f]+ +LINUX64 "; echo $?) "the console with no -e finds the job's groupd: conf lists both hosts" ||
    echo "$c" | sed 's/^/# /'
c=$(C ps -a 2>&1)
ok $([ "$(echo "$c" | grep -Ec " +[0-9a-f]+ +4/c +vm_task *$")" = 2 ] && echo "$c" | grep -Eq "^ *$H1 +[0-9a-f]+ "; echo $?) "ps -a lists the tasks on both hosts" ||
    echo "$c" | sed 's/^/# /'
vm_exec 0 env -u GIMPI_GROUPD XDG_RUNTIME_DIR="$RD" timeout 30 "$B/programs/gimpi-stat" >"$VM_DIR/stat.out" 2>&1
ok $([ $? = 0 ] && grep -qx 'no groups exist' "$VM_DIR/stat.out"; echo $?) "gimpi-stat with no endpoint asks it too" ||
    sed 's/^/# /' "$VM_DIR/stat.out"

# spawn -> onto the other host: the lines come to the console, not to gimpirun
c=$(C spawn -"$H1" -\> "$CHILD" hello 2>&1)
tid=$(echo "$c" | sed -n '3s/^t\([0-9a-f]*\)$/\1/p')
ok $([ "$(echo "$c" | sed -n 1,2p)" = "$(printf '[1]\n1 successful')" ] && [ -n "$tid" ] &&
     echo "$c" | grep -Eqx "\[1:t$tid\] hello from .+" && echo "$c" | grep -Eqx "\[1:t$tid\] to stderr from .+" &&
     [ "$(echo "$c" | grep "^\[1:t$tid\]" | tail -1)" = "[1:t$tid] EOF" ] &&
     [ "$(echo "$c" | tail -1)" = "[1] finished" ]; echo $?) "spawn -> onto $H1: [1], its tid, then its lines, EOF and [1] finished at the console" ||
    echo "$c" | sed 's/^/# /'
ok $([ -n "$tid" ] && ! has 'hello from' && ! has 'to stderr from' && ! has "t$tid"; echo $?) "... and none of it in gimpirun's output"
if [ "$VM_UTS" = yes ]; then
    ok $(echo "$c" | grep -qx "\[1:t$tid\] hello from ${VM_HOSTS[1]}"; echo $?) "... the child ran on ${VM_HOSTS[1]} (it says its host name)" ||
        echo "$c" | sed 's/^/# /'
else
    ok 0 "# SKIP the hosts share one host name here: which one ran it is not visible"
fi
# by default placement (gimpirun starts them, on either host): every line comes back
c=$(C spawn -2 -\> "$CHILD" hello 2>&1)
ok $([ "$(echo "$c" | sed -n 1,2p)" = "$(printf '[1]\n2 successful')" ] &&
     [ "$(echo "$c" | grep -Ec '^\[1:t[0-9a-f]+\] hello from .+$')" = 2 ] &&
     [ "$(echo "$c" | grep -Ec '^\[1:t[0-9a-f]+\] EOF$')" = 2 ] && [ "$(echo "$c" | tail -1)" = "[1] finished" ]; echo $?) "spawn -2 -> by default placement: both tasks' lines and EOFs, then [1] finished" ||
    echo "$c" | sed 's/^/# /'
c=$(C spawn -"$H1" no-such-program 2>&1)
ok $([ "$c" = "$(printf '0 successful\nNo such file: no-such-program on host %s' "$H1")" ]; echo $?) "a program missing on $H1: No such file, naming the program and the host" ||
    echo "$c" | sed 's/^/# /'

# halt: the job ends, its run file goes
c=$(C halt 2>&1)
timeout 30 tail --pid=$job -f /dev/null
ok $(! kill -0 $job 2>/dev/null && [ ! -e "$jobfile" ] && [ ! -e "$jobfile.sock" ]; echo $?) "the console's halt ends the job; gimpirun removes its run file" ||
    echo "$c" | sed 's/^/# /'
wait $job
exit $((failed > 0))
