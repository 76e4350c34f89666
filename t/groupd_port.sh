#!/bin/bash
# t/groupd_port.sh — groupd --port P [--bind ADDR]: the fixed ports a firewall needs.  It
# prints tcp://ADDR:P, listens on exactly P and P+1 (the events), serves a task there, and
# --pub-port still moves the event port; --port with --endpoint, --bind without --port,
# and ports out of range are refused with exit 2.  Every wait is bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
GROUPD="$top_builddir/groupd/groupd"
ATT="$top_builddir/t/gd_attack"
unset GIMPI_KEY_FD GIMPI_GROUPD
od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$tmp/key"; echo >>"$tmp/key"; chmod 600 "$tmp/key"
export GIMPI_KEY_FILE="$tmp/key"
# waits (bounded) until file $1 has a line matching $2
waitfor() { for _ in $(seq 1 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# the TCP ports process $1 listens on, sorted
ports() { ss -ltnpH 2>/dev/null | grep "pid=$1," | awk '{ n = split($4, a, ":"); print a[n] }' | sort -n | tr '\n' ' '; }

echo "1..8"
p=$((23000 + ($$ % 1500) * 2))
"$GROUPD" --foreground --port "$p" --bind 127.0.0.1 >"$tmp/gd.out" 2>"$tmp/gd.err" &
gd=$!
waitfor "$tmp/gd.out" '://'
[ "$(head -n 1 "$tmp/gd.out")" = "tcp://127.0.0.1:$p" ]
check $? "--port $p --bind 127.0.0.1: groupd serves tcp://127.0.0.1:$p" "$tmp/gd.out" "$tmp/gd.err"
if command -v ss >/dev/null; then
    got=$(ports $gd)
    [ "$got" = "$p $((p + 1)) " ]
    check $? "it listens on exactly $p and $((p + 1)) (${got:-none})" "$tmp/gd.err"
else
    ok 0 "# SKIP ss is not installed"
fi
timeout 60 "$ATT" member "tcp://127.0.0.1:$p" ported 1 >"$tmp/m" 2>&1
grep -q "^member ok" "$tmp/m"
check $? "and serves a task, events included" "$tmp/m"
kill $gd 2>/dev/null; wait $gd 2>/dev/null

"$GROUPD" --foreground --port "$p" --pub-port "$((p + 7))" >"$tmp/gd2.out" 2>"$tmp/gd2.err" &
gd=$!
waitfor "$tmp/gd2.out" '://'
[ "$(head -n 1 "$tmp/gd2.out")" = "tcp://0.0.0.0:$p" ]
check $? "--port alone binds 0.0.0.0" "$tmp/gd2.out" "$tmp/gd2.err"
if command -v ss >/dev/null; then
    got=$(ports $gd)
    [ "$got" = "$p $((p + 7)) " ]
    check $? "--pub-port moves the event port (${got:-none})" "$tmp/gd2.err"
else
    ok 0 "# SKIP ss is not installed"
fi
kill $gd 2>/dev/null; wait $gd 2>/dev/null

"$GROUPD" --foreground --port "$p" --endpoint "tcp://127.0.0.1:$p" >/dev/null 2>"$tmp/e1"
[ $? = 2 ] && grep -q "exclude each other" "$tmp/e1"
check $? "--port with --endpoint: refused, exit 2" "$tmp/e1"
"$GROUPD" --foreground --bind 127.0.0.1 >/dev/null 2>"$tmp/e2"
[ $? = 2 ] && grep -q "needs --port" "$tmp/e2"
check $? "--bind without --port: refused, exit 2" "$tmp/e2"
"$GROUPD" --foreground --port 65535 >/dev/null 2>"$tmp/e3"
[ $? = 2 ] && grep -q "bad --port" "$tmp/e3"
check $? "--port 65535 (no room for the event port): refused" "$tmp/e3"
exit $((failed > 0))
