#!/bin/bash
# t/groupd_harden.sh — groupd's own files and endpoints under a hostile neighbour: an
# endpoint on a transport that authenticates nobody (tipc, ws, inproc) is refused with one
# clear line and a non-zero exit; a symbolic link planted where an ipc endpoint's lock file
# goes is not followed (the file it names keeps its bytes, groupd does not start); and a
# groupd that exits after its directory was removed and made again by a newer groupd on
# the same endpoint leaves the newer one's socket files in place, so that it still serves.
# Then floods against a tcp groupd: 3,000 strangers' connections that stall after the
# ZMTP greeting (--max-handshakes 64; none shut down before it is 100 ms old, so the
# flood's rate times that comes on top) leave groupd's descriptors and memory bounded while
# a real task joins and passes its barrier, and the memory comes back after them; a key
# holder's 2,000 subscriptions of 4 KiB (--max-sub-bytes 1 MiB; libzmq keeps some 140 KB
# for each) get its event connection shut down, and the memory is given back.  Last, a
# task of a one-client gimpirun job that knows the job's tables cannot find the job's
# tid block in groupd by its identity key (t/job_reserve).
# Every wait is bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
GROUPD="$top_builddir/groupd/groupd"
ATT="$top_builddir/t/gd_attack"
STAT="$top_builddir/programs/gimpi-stat"
unset GIMPI_KEY_FD GIMPI_GROUPD
# waits (bounded) until file $1 has a line matching $2
waitfor() { for _ in $(seq 1 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# groupd's resident memory in KiB, and its open descriptors
rss() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
nfds() { ls "/proc/$1/fd" | wc -l; }
# writes a fresh key file $1
mkkey() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1"; echo >>"$1"; chmod 600 "$1"; }
# waits (bounded) until process $1 has ended
waitgone() { for _ in $(seq 1 400); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }

echo "1..14"
# 1-3: transports without authentication
for ep in 'tipc://{5560,0,0}' "ws://127.0.0.1:$((20000 + RANDOM % 20000))" inproc://gd; do
    timeout 10 "$GROUPD" --foreground --endpoint "$ep" >"$tmp/sch.out" 2>"$tmp/sch.err"; rc=$?
    [ $rc != 0 ] && [ ! -s "$tmp/sch.out" ] \
        && grep -q "^groupd: refusing endpoint .*only ipc:// .* and tcp:// .* authenticate" "$tmp/sch.err"
    check $? "$ep refused with a clear line (exit $rc)" "$tmp/sch.out" "$tmp/sch.err"
done

# 4: a symbolic link where the lock file goes
mkdir -m 700 "$tmp/l"
echo precious >"$tmp/target"
ln -s "$tmp/target" "$tmp/l/gd.lock"
timeout 10 "$GROUPD" --foreground --idle-exit 1 --endpoint "ipc://$tmp/l/gd" >"$tmp/l.out" 2>"$tmp/l.err"; rc=$?
[ $rc != 0 ] && [ "$(cat "$tmp/target")" = precious ] && grep -q "lock file .*symbolic link" "$tmp/l.err"
check $? "a symlinked lock file is not followed (exit $rc, target: $(cat "$tmp/target"))" "$tmp/l.err"

# 5-6: an older groupd's exit leaves a newer one's sockets alone
mkdir -m 700 "$tmp/d"
"$GROUPD" --foreground --endpoint "ipc://$tmp/d/gd" >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
waitfor "$tmp/a.out" '://'
rm -rf "$tmp/d"; mkdir -m 700 "$tmp/d"
"$GROUPD" --foreground --endpoint "ipc://$tmp/d/gd" >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
waitfor "$tmp/b.out" '://'
kill -TERM $a; waitgone $a
[ -S "$tmp/d/gd" ] && [ -S "$tmp/d/gd.pub" ]
check $? "the older groupd's exit left the newer one's socket files" "$tmp/a.err" "$tmp/b.err"
timeout 20 "$STAT" --endpoint "ipc://$tmp/d/gd" >"$tmp/st.out" 2>&1
check $? "the newer groupd still serves" "$tmp/st.out" "$tmp/b.err"
kill -TERM $b; waitgone $b

# 7-10: a handshake flood.  In a sanitizer build, freed blocks skip the quarantine so
# that VmRSS measures what groupd holds
mkkey "$tmp/key"
export GIMPI_KEY_FILE="$tmp/key"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
"$GROUPD" --foreground --max-handshakes 64 --max-sub-bytes 1048576 --key "$tmp/key" \
    --endpoint 'tcp://127.0.0.1:*' >"$tmp/t.out" 2>"$tmp/t.err" &
gd=$!
waitfor "$tmp/t.out" '://'
ep=$(head -n 1 "$tmp/t.out")
timeout 30 "$ATT" member "$ep" warm 1 >/dev/null 2>&1     # (the first client's allocations)
base=$(rss $gd) basefds=$(nfds $gd)
mkfifo "$tmp/hold"
timeout 60 "$ATT" flood "$ep" 3000 <"$tmp/hold" >"$tmp/fl.out" 2>&1 &
exec 7>"$tmp/hold"
timeout 30 "$ATT" member "$ep" real 1 >"$tmp/m.out" 2>&1 &
m=$!
maxfds=0 maxrss=0
for _ in $(seq 1 300); do
    f=$(nfds $gd) r=$(rss $gd)
    [ "$f" -gt $maxfds ] && maxfds=$f
    [ "$r" -gt $maxrss ] && maxrss=$r
    grep -q opened "$tmp/fl.out" && ! kill -0 $m 2>/dev/null && break
    sleep 0.05
done
wait $m
grep -q "^member ok" "$tmp/m.out"
check $? "a real task joins and passes its barrier during the flood ($(cat "$tmp/fl.out"))" "$tmp/m.out" "$tmp/t.err"
[ $maxfds -le $((basefds + 64 + 1200)) ]
check $? "groupd's descriptors stay bounded: at most $maxfds (base $basefds, cap 64)" "$tmp/t.err"
[ $((maxrss - base)) -lt 40960 ]
check $? "groupd's memory stays bounded: +$((maxrss - base)) KiB at most" "$tmp/t.err"
exec 7>&-
for _ in $(seq 1 200); do [ "$(nfds $gd)" -le $((basefds + 2)) ] && break; sleep 0.05; done
sleep 1.2                                                   # (at most one trim a second)
timeout 30 "$ATT" member "$ep" again 1 >/dev/null 2>&1
after=$(rss $gd)
# a sanitizer's allocator keeps what it had (malloc_trim does not reach it): the two
# "comes back" checks are for the real allocator
SAN=
grep -qa __asan_init "$GROUPD" && SAN="a sanitizer build's allocator keeps its memory"
if [ -n "$SAN" ]; then skip "and it comes back after the flood: $SAN"; else
    [ $((after - base)) -lt 4096 ]
    check $? "and it comes back after the flood: +$((after - base)) KiB" "$tmp/t.err"
fi

# 11-13: a subscription flood from a key holder
base=$(rss $gd)
timeout 60 "$ATT" subs "$ep" 2000 4096 <"$tmp/hold" >"$tmp/s.out" 2>&1 &
exec 7>"$tmp/hold"
waitfor "$tmp/t.err" 'the event connection that sent the most'
st=$?
peak=$(rss $gd)
check $st "a subscription flood: its connection shut down (memory then +$((peak - base)) KiB)" "$tmp/t.err" "$tmp/s.out"
exec 7>&-
for _ in $(seq 1 100); do [ $(($(rss $gd) - base)) -lt 8192 ] && break; sleep 0.05; done
after=$(rss $gd)
if [ -n "$SAN" ]; then skip "and its memory comes back: $SAN"; else
    [ $((after - base)) -lt 8192 ]
    check $? "and its memory comes back: +$((after - base)) KiB" "$tmp/t.err"
fi
timeout 30 "$ATT" member "$ep" last 1 >"$tmp/m.out" 2>&1
check $? "groupd still serves a real task" "$tmp/m.out" "$tmp/t.err"
kill -TERM $gd; waitgone $gd

# 14: the reservation key of a one-client job is random
mkdir -m 700 "$tmp/r"
"$GROUPD" --foreground --endpoint "ipc://$tmp/r/gd" >"$tmp/r.out" 2>"$tmp/r.err" &
gd=$!
waitfor "$tmp/r.out" '://'
GIMPI_GROUPD="ipc://$tmp/r/gd" timeout 60 "$top_builddir/programs/gimpirun" -np 2 \
    "$top_builddir/t/job_reserve" >"$tmp/jr.out" 2>&1
[ "$(grep -c '^reserve got another block' "$tmp/jr.out")" = 2 ]
check $? "a one-client job's tid block cannot be found from its tables" "$tmp/jr.out"
kill -TERM $gd; waitgone $gd
exit $((failed > 0))
