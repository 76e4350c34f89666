#!/bin/bash
# t/groupd_first_cut.sh — a task's first handshake with a tcp groupd cut by the peer is a
# groupd gone, not a wrong key (doc/security.md §3.1): a listener on groupd's port takes the
# task's first connection and closes it mid-handshake (as a groupd killed there does, and
# as one with another key does), then groupd starts on that port; the task, which has never
# completed a handshake, reconnects and ends its join and barrier.  Before the fix it took
# the one cut for "not the same key" and failed.  Then a groupd with another key still
# refuses it, with the one line that says so.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
GROUPD="$top_builddir/groupd/groupd"
ATT="$top_builddir/t/gd_attack"
unset GIMPI_KEY_FD GIMPI_GROUPD
mkkey() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$1"; echo >>"$1"; chmod 600 "$1"; }
waitfor() { for _ in $(seq 1 400); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
mkkey "$tmp/keyA"; mkkey "$tmp/keyB"
export GIMPI_KEY_FILE="$tmp/keyA"
echo "1..4"

# the cutter: binds a free port, says it, takes one connection, reads the greeting's first
# bytes, closes both, says so
python3 - "$tmp/cut" <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(1)
out = open(sys.argv[1], "w"); print("port", s.getsockname()[1], file=out, flush=True)
s.settimeout(30)
c, _ = s.accept(); c.settimeout(5)
try:
    c.recv(10)
except OSError:
    pass
c.close(); s.close(); print("cut", file=out, flush=True)
PY
cutter=$!
waitfor "$tmp/cut" '^port' || { echo "Bail out! the cutter did not listen"; exit 1; }
port=$(sed -n 's/^port //p' "$tmp/cut")
ep="tcp://127.0.0.1:$port"
timeout 60 "$ATT" member "$ep" firstcut 1 >"$tmp/m" 2>"$tmp/m.err" &
member=$!
waitfor "$tmp/cut" '^cut'
cut=$?
wait "$cutter"
"$GROUPD" --foreground --endpoint "$ep" --key "$tmp/keyA" >"$tmp/gd.out" 2>"$tmp/gd.err" &
gd=$!
wait "$member"; rc=$?
[ "$cut" = 0 ] && [ "$rc" = 0 ] && grep -q "^member ok" "$tmp/m" && ! grep -q "refused us" "$tmp/m.err"
ok $? "the first handshake cut (cut: $([ $cut = 0 ] && echo yes || echo no)), groupd then started there: the task joins and passes its barrier (exit $rc)" \
    || sed 's/^/# /' "$tmp/m" "$tmp/m.err" "$tmp/gd.err" | head -20
kill "$gd"; wait "$gd" 2>/dev/null

# another key: still refused, told once, within a second
"$GROUPD" --foreground --endpoint 'tcp://127.0.0.1:*' --key "$tmp/keyB" >"$tmp/gdB.out" 2>"$tmp/gdB.err" &
gd=$!
waitfor "$tmp/gdB.out" '://'
epB=$(head -n 1 "$tmp/gdB.out")
t0=$(date +%s%N)
timeout 60 "$ATT" member "$epB" firstcut 1 >"$tmp/mB" 2>"$tmp/mB.err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$rc" != 0 ] && ! grep -q "^member ok" "$tmp/mB"
ok $? "a groupd with another key: the task fails (exit $rc)" || sed 's/^/# /' "$tmp/mB" "$tmp/mB.err" | head
[ "$(grep -c "refused us: not the same key" "$tmp/mB.err")" = 1 ]
ok $? "... saying once that it is not the same key" || sed 's/^/# /' "$tmp/mB.err" | head
[ "$ms" -lt 5000 ]
ok $? "... at once, not after the HELLO's 5 s ($ms ms)"
kill "$gd"; wait "$gd" 2>/dev/null
exit $((failed > 0))
