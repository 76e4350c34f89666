#!/bin/bash
# t/live_view.sh — the live view (gimpi-stat --tasks/--watch, the console's top) of PVM
# tasks hung on purpose (t/live_view_task, started from the shell on a groupd of the
# test's own): a receive from a task that never sends is diagnosed with the call, its
# peer and that the peer runs; once the message comes the status is cleared; a timed
# receive from a task that then exits says "has exited"; a barrier that one member never
# enters names the call, the time and the member that has not arrived, and is cleared
# when it enters (arbitrated by groupd, then the next one on the data plane); a reduce
# likewise (it waits in shared memory); a read of the message box that waits for its
# entry, and a receive from any task that a pvm_notify may answer.  Each diagnosis must
# come from one question answered within 1 s, and show within 5 s of the hang's start
# (GIMPI_STATUS_AFTER is 250 ms).  A task whose 1500 receives each publish and clear a
# status still gets its next groupd answer.  Two tasks receiving from each other are
# named a deadlock.  The tasks answer each command with a line, so the script knows
# where they are; the view is polled, bounded, never slept on.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
STAT="$top_builddir/programs/gimpi-stat"
G="$top_builddir/programs/gimpi"
TASK="$top_builddir/t/live_view_task"
echo "1..37"
export GIMPI_GROUPD="ipc://$tmp/gd"
unset GIMPI_GROUPD_IDLE GIMPI_STATUS_AFTER
out="$tmp/view"

mkfifo "$tmp/gd.fifo"
"$top_builddir/groupd/groupd" --foreground --endpoint "$GIMPI_GROUPD" >"$tmp/gd.fifo" 2>"$tmp/gd.err" &
exec 3<"$tmp/gd.fifo"
read -r -t 10 ep <&3
[ "$ep" = "$GIMPI_GROUPD" ]
ok $? "groupd serves $GIMPI_GROUPD"

# start NAME [VAR=VALUE...]: a task (with those variables) reading commands from fd
# ${NAME}_w, answering on fd ${NAME}_r; its tid (hex) in $NAME
start() {
    mkfifo "$tmp/$1.in" "$tmp/$1.out"
    timeout 120 env "${@:2}" "$TASK" <"$tmp/$1.in" >"$tmp/$1.out" 2>"$tmp/$1.err" &
    local w r line
    exec {w}>"$tmp/$1.in"
    exec {r}<"$tmp/$1.out"
    eval "${1}_w=$w ${1}_r=$r"
    read -r -t 30 line <&$r
    eval "$1=\${line#ready t}"
}
# say NAME COMMAND: sends a command; answer NAME: its next answer line (30 s at most)
say() { local fd="${1}_w"; echo "$2" >&${!fd}; }
answer() { local fd="${1}_r" line=; read -r -t 30 line <&${!fd}; echo "$line"; }
# view [ARGS]: one question, timed: $out gets the answer, $took its milliseconds
view() {
    local t0=$(date +%s%N)
    "$STAT" --tasks "$@" >"$out" 2>&1
    took=$((($(date +%s%N) - t0) / 1000000))
}
# shows TEXT...: asks until the view has every TEXT (at most 10 s), then once more, timed;
# 0 when that answer (within 1 s) has them all
shows() {
    local t end=$(($(date +%s) + 10)) all
    while :; do
        view
        all=0
        for t in "$@"; do has "$t" || all=1; done
        [ $all = 0 ] || [ "$(date +%s)" -ge $end ] || { sleep 0.05; continue; }
        break
    done
    [ $all = 0 ] || return 1
    view
    for t in "$@"; do has "$t" || return 1; done
    [ "$took" -lt 1000 ]
}
# lacks TEXT: asks until the view no longer has TEXT (at most 10 s)
lacks() {
    local end=$(($(date +%s) + 10))
    while view; has "$1"; do
        [ "$(date +%s)" -lt $end ] || return 1
        sleep 0.05
    done
}

start a
start b
[ -n "$a" ] && [ -n "$b" ] && [ "$a" != "$b" ]
ok $? "two tasks started from the shell: t$a t$b"
view
okd $? "gimpi-stat --tasks answers"
has "2 tasks, 0 blocked" && [ "$(grep -c ' running$' "$out")" = 2 ]
okd $? "both run, nothing blocked"

# a receive from a task that never sends
t0=$(date +%s%N)
say a "recv $b 7"
shows "t$a has been in pvm_recv(t$b, tag 7) for" "t$b is running" "(0 messages queued)"
okd $? "a hung pvm_recv names the call, the peer and that it runs (answer in $took ms)"
seen_ms=$((($(date +%s%N) - t0) / 1000000))
[ $seen_ms -lt 5000 ]
ok $? "diagnosed $seen_ms ms after the receive began"
"$STAT" --tasks --json >"$out" 2>&1
has "\"call\":\"pvm_recv(t$b, tag 7)\"" && has "\"peer\":$((16#$b)),\"peer_state\":\"running\""
okd $? "--json: the call, the peer and its state"
"$G" top >"$out" 2>&1
has "t$a has been in pvm_recv(t$b, tag 7) for"
okd $? "the console's top says the same"
"$STAT" --watch --count 2 --interval 100 >"$out" 2>&1
[ "$(count "t$a has been in pvm_recv(t$b, tag 7)")" = 2 ]
okd $? "--watch --count 2 shows it twice"
say b "send $a 7"
[ "$(answer b)" = "sent 0" ] && answer a | grep -q '^recv [1-9]'
ok $? "the message comes: the receive returns"
lacks "pvm_recv"
okd $? "and its status is cleared"
has "0 blocked"
okd $? "nothing is blocked"

# a timed receive from a task that exits
say a "trecv $b 8 8"
shows "t$a has been in pvm_trecv(t$b, tag 8, 8.000 s) for" "t$b is running"
okd $? "a timed receive waits for t$b, which runs"
say b exit
[ "$(answer b)" = bye ]
ok $? "t$b exits"
shows "t$a has been in pvm_trecv(t$b, tag 8, 8.000 s) for" "t$b has exited"
okd $? "the view says t$b has exited (answer in $took ms)"
[ "$(answer a)" = "trecv 0" ]
ok $? "the timed receive ends with nothing"

# a barrier one member never enters
start c
start d
for t in a c d; do say $t "join lv"; answer $t >/dev/null; done
say a "barrier lv 3"
say c "barrier lv 3"
shows "t$a has been in pvm_barrier(\"lv\", 3) for" "t$c has been in pvm_barrier(\"lv\", 3) for" \
      "not arrived: t$d"
okd $? "a barrier names the call, the time and the member not arrived (t$d)"
say d "barrier lv 3"
[ "$(answer a)" = "barrier 0" ] && [ "$(answer c)" = "barrier 0" ] && [ "$(answer d)" = "barrier 0" ]
ok $? "the last member enters: every barrier returns 0"
lacks "pvm_barrier"
okd $? "and the barrier's statuses are cleared"
# the next barrier of the same members runs on the data plane (noted to groupd at 100 ms)
say a "barrier lv 3"
say c "barrier lv 3"
shows "t$a has been in pvm_barrier(\"lv\", 3) for" "t$c has been in pvm_barrier(\"lv\", 3) for" \
      "not arrived: t$d"
okd $? "so does the next one, on the data plane"
say d "barrier lv 3"
[ "$(answer a)" = "barrier 0" ] && [ "$(answer c)" = "barrier 0" ] && [ "$(answer d)" = "barrier 0" ]
ok $? "which returns 0 everywhere once t$d enters"
lacks "pvm_barrier"
okd $? "and is cleared"

# a reduce one member never enters
say a "reduce lv 0"
say c "reduce lv 0"
shows "t$a has been in pvm_reduce(\"lv\", root 0) for"
okd $? "a reduce that waits names the call and the group"
say d "reduce lv 0"
[ "$(answer a)" = "reduce 0" ] && [ "$(answer c)" = "reduce 0" ] && [ "$(answer d)" = "reduce 0" ]
ok $? "the last member enters: every reduce returns 0"
lacks "pvm_reduce"
okd $? "and the reduce's statuses are cleared"

# a read of the message box that waits for its entry
say a "recvinfo lvbox"
shows "t$a has been in pvm_recvinfo(\"lvbox\", 0, 32) for"
okd $? "a waiting pvm_recvinfo names the entry"
say c "putinfo lvbox"
[ "$(answer c)" = "putinfo 0" ] && answer a | grep -q '^recvinfo [1-9]'
ok $? "the entry is put: the read returns"
lacks "pvm_recvinfo"
okd $? "and its status is cleared"

# a receive from any task while a pvm_notify may match waits in slices: they add up
say a "notify $d 9"
[ "$(answer a)" = "notify 0" ]
ok $? "t$a watches t$d's exit (pvm_notify, tag 9)"
say a "recv -1 9"
shows "t$a has been in pvm_recv(-1, tag 9) for"
okd $? "a receive from any task, cut in slices for pvm_notify, shows too"
say d exit
[ "$(answer d)" = bye ] && answer a | grep -q '^recv [1-9]'
ok $? "t$d exits: the notification is received"
lacks "pvm_recv"
okd $? "and the status is cleared"

# a task that blocks often and asks groupd nothing else: the answers to its statuses
# must not pile up (groupd would drop a reply that matters once the queue is full)
start e GIMPI_STATUS_AFTER=1
start f
say e "recvn $f 11 1500"
say f "sendn $e 11 1500"
[ "$(answer f)" = "sentn 0" ] && [ "$(answer e)" = "recvn 0" ]
ok $? "1500 receives that each block a few ms (GIMPI_STATUS_AFTER=1)"
say e "join lv2"
[ "$(answer e)" = "joined 0" ]
ok $? "then a request to groupd is answered"
lacks "t$e has been in"
okd $? "and no status is left behind"

# two tasks that wait for each other
say e "trecv $f 12 4"
say f "trecv $e 13 4"
shows "t$e has been in pvm_trecv(t$f, tag 12, 4.000 s) for" \
      "t$f is blocked too, in pvm_trecv(t$e, tag 13, 4.000 s): a deadlock, t$e -> t$f -> t$e"
okd $? "two tasks receiving from each other: the view names the deadlock"
[ "$(answer e)" = "trecv 0" ] && [ "$(answer f)" = "trecv 0" ]
ok $? "their timed receives end"

for t in a c e f; do say $t exit; done
exit $((failed > 0))
