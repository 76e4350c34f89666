#!/bin/bash
# t/groupd_harden.sh — groupd's own files and endpoints under a hostile neighbour: an
# endpoint on a transport that authenticates nobody (tipc, ws, inproc) is refused with one
# clear line and a non-zero exit; a symbolic link planted where an ipc endpoint's lock file
# goes is not followed (the file it names keeps its bytes, groupd does not start); and a
# groupd that exits after its directory was removed and made again by a newer groupd on
# the same endpoint leaves the newer one's socket files in place, so that it still serves.
# Every wait is bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
GROUPD="$top_builddir/groupd/groupd"
STAT="$top_builddir/programs/gimpi-stat"
unset GIMPI_KEY_FD GIMPI_GROUPD
check() { local st=$1 desc=$2; shift 2; ok "$st" "$desc"; [ "$st" = 0 ] || sed 's/^/# /' "$@" | head -20; }
# waits (bounded) until file $1 has a line matching $2
waitfor() { for _ in $(seq 1 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# waits (bounded) until process $1 has ended
waitgone() { for _ in $(seq 1 400); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.05; done; return 1; }

echo "1..6"
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
exit $((failed > 0))
