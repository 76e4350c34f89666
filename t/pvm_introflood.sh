#!/bin/bash
# t/pvm_introflood.sh — issue 25's flood as a PVM user meets it: a parent under gimpirun
# spawns 20 children that each pvm_send it one message, while t/dyn_flood's flooder opens
# connections to the parent's data-plane port as fast as it can (held silent, then
# closed at once).  Every message must arrive (before, 12 of 20 were lost at 20,000
# connections a second, every pvm_send having returned 0).  The children call over TCP
# (GIMPI_LOCAL_SOCKETS=0) like tasks of other hosts.  Bounded by timeouts.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$(cd "$top_builddir/t" && pwd)/pvm_introflood"
FLOOD="$top_builddir/t/dyn_flood"
. "${top_srcdir:-.}/t/tap.sh"
command -v ss >/dev/null || { echo "1..0 # SKIP no ss (iproute2)"; exit 0; }
export GIMPI_LOCAL_SOCKETS=0
echo "1..4"
for hold in 900 16; do
    rm -f "$tmp/go" "$tmp/stop" "$tmp/outp" "$tmp/floodp"
    mkfifo "$tmp/go" "$tmp/stop" "$tmp/outp" "$tmp/floodp"
    timeout 120 "$RUN" -np 1 "$TASK" 20 <"$tmp/go" >"$tmp/outp" 2>"$tmp/err" &
    run=$!
    exec 7>"$tmp/go" 6<"$tmp/outp"
    pid=
    read -r -t 60 -u 6 line && pid=${line#pid }     # the parent is up: its pid
    port=$(ss -Hltnp 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed 's/.*://' | head -1)
    "$FLOOD" flood "${port:-1}" "$hold" <"$tmp/stop" >"$tmp/floodp" 2>/dev/null &
    flooder=$!
    exec 8>"$tmp/stop" 5<"$tmp/floodp"
    read -r -n 1 -t 60 -u 5 _          # the flood runs
    echo go >&7
    exec 7>&-
    got=
    read -r -t 100 -u 6 got
    wait $run
    rc=$?
    echo s >&8
    exec 8>&- 6<&-
    rate=
    read -r -t 30 -u 5 rate
    exec 5<&-
    wait $flooder
    echo "$got" >"$tmp/out"
    echo "# the parent refused callers in $(grep -c 'refused an incoming' "$tmp/err") lines, and these many more: $(grep 'more incoming' "$tmp/err" | sed 's/.*: \.\.\. //; s/ more.*//' | tr '\n' ' ')"
    [ $rc = 0 ] && grep -q "^got 20 of 20" "$tmp/out"
    ok $? "flood holding $hold (port ${port:-?}, ${rate:-?} connections a second): every child's message arrived ($(grep '^got' "$tmp/out"), exit $rc)" ||
        sed 's/^/# /' "$tmp/out" "$tmp/err" | grep -v "refused an incoming\|more incoming" | head -20
    ! grep -v "refused an incoming\|more incoming" "$tmp/err" | grep -q .
    ok $? "flood holding $hold: nothing on stderr but the refusals" ||
        grep -v "refused an incoming\|more incoming" "$tmp/err" | sed 's/^/# /' | head
done
exit $((failed > 0))
