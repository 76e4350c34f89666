#!/bin/bash
# t/vmhosts_smoke.sh — proves the emulated hosts of t/vmhosts.sh: three namespaces with a
# real sshd each, reached from h0 with the test's key and verified host keys.  Each host
# has its own address and hostname, stdin, stdout, stderr and the exit status pass through
# ssh, the build tree is visible on every host, a key that is not authorized and a host key
# that is not known are refused, a link taken down fails within the connect timeout, and
# netem delay can be put on the links.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

t0=$(date +%s.%N)
vm_up 3
t1=$(date +%s.%N)
echo "1..14"
echo "# vm_up 3 took $(echo "$t1 - $t0" | bc 2>/dev/null || echo "?") s"
# shellcheck disable=SC2206 # VM_SSH is a command line, split on purpose
ssh=($VM_SSH)

# each host is itself: address and hostname
for i in 1 2; do
    out=$(vm_exec 0 timeout 20 "${ssh[@]}" "h$i" 'ip -4 -o addr show eth0; hostname' 2>&1)
    if echo "$out" | grep -q "inet 198.51.100.1$i/24" && echo "$out" | grep -qx "h$i"; then
        ok 0 "ssh h0 -> h$i: eth0 is 198.51.100.1$i, hostname h$i"
    else
        ok 1 "ssh h0 -> h$i"; echo "$out" | sed 's/^/# /'
    fi
done
out=$(vm_exec 1 timeout 20 "${ssh[@]}" 198.51.100.12 hostname 2>&1)
[ "$out" = h2 ]; ok $? "ssh by raw address from h1 reaches h2 ($out)"

# stdin, stdout, stderr and the exit status
out=$(echo secret | vm_exec 0 timeout 20 "${ssh[@]}" h1 cat 2>&1)
[ "$out" = secret ]; ok $? "stdin passes through ssh to the remote command ($out)"
vm_exec 0 timeout 20 "${ssh[@]}" h2 'echo out; echo err >&2; exit 7' >"$tmp/o" 2>"$tmp/e"
rc=$?
[ $rc = 7 ] && [ "$(cat "$tmp/o")" = out ] && [ "$(cat "$tmp/e")" = err ]
ok $? "stdout, stderr and exit status come back apart (rc $rc)"

# the build tree is on every host
bt=$(cd "$top_builddir" && pwd)
vm_exec 0 timeout 20 "${ssh[@]}" h2 "test -d '$bt/t'"
ok $? "the build tree is visible on h2"

# several sessions at once
pids=""
for k in $(seq 1 12); do
    vm_exec 0 timeout 60 "${ssh[@]}" "h$((k % 3))" "echo $k" >"$tmp/par$k" 2>"$tmp/par$k.err" &
    pids="$pids $!"
done
rc=0
for p in $pids; do wait "$p" || rc=1; done
bad=0
for k in $(seq 1 12); do
    [ "$(cat "$tmp/par$k")" = "$k" ] && continue
    bad=$((bad + 1))
    sed "s/^/# session $k: /" "$tmp/par$k" "$tmp/par$k.err"
done
[ $rc = 0 ] && [ $bad = 0 ]; ok $? "12 sessions at once over three hosts ($bad wrong)"

# a key that is not authorized is refused
ssh-keygen -q -t ed25519 -N '' -f "$tmp/other" && \
    sed "s|IdentityFile .*|IdentityFile $tmp/other|" "$VM_SSH_CONFIG" >"$tmp/wrongkey.cfg"
vm_exec 0 timeout 20 ssh -F "$tmp/wrongkey.cfg" h1 true 2>"$tmp/wk.err"
rc=$?
[ $rc = 255 ] && grep -q 'Permission denied' "$tmp/wk.err"
ok $? "a key that is not authorized is refused (rc $rc: $(head -n 1 "$tmp/wk.err"))"

# no key at all
sed "s|IdentityFile .*|IdentityFile $tmp/none|" "$VM_SSH_CONFIG" >"$tmp/nokey.cfg"
vm_exec 0 timeout 20 ssh -F "$tmp/nokey.cfg" h1 true 2>"$tmp/nk.err"
rc=$?
[ $rc = 255 ]; ok $? "no key: refused (rc $rc)"

# an unknown host key and a changed host key are refused
grep -v '^h2,' "$VM_DIR/known_hosts" >"$tmp/kh.unknown"
sed "s|UserKnownHostsFile .*|UserKnownHostsFile $tmp/kh.unknown|" "$VM_SSH_CONFIG" >"$tmp/unknown.cfg"
vm_exec 0 timeout 20 ssh -F "$tmp/unknown.cfg" h2 true 2>"$tmp/uk.err"
rc=$?
[ $rc = 255 ] && grep -q 'Host key verification failed' "$tmp/uk.err"
ok $? "a host whose key is unknown is refused (rc $rc)"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/fakehost"
{ cat "$tmp/kh.unknown"; echo "h2,198.51.100.12 $(cut -d' ' -f1,2 "$tmp/fakehost.pub")"; } >"$tmp/kh.changed"
sed "s|UserKnownHostsFile .*|UserKnownHostsFile $tmp/kh.changed|" "$VM_SSH_CONFIG" >"$tmp/changed.cfg"
vm_exec 0 timeout 20 ssh -F "$tmp/changed.cfg" h2 true 2>"$tmp/ck.err"
rc=$?
[ $rc = 255 ] && grep -q 'Host key verification failed' "$tmp/ck.err"
ok $? "a host whose key changed is refused (rc $rc)"

# a broken link: ssh fails within the connect timeout, and works again when it is back
vm_link_down 2
s=$(date +%s)
vm_exec 0 timeout 30 "${ssh[@]}" h2 true 2>"$tmp/ld.err"
rc=$?
el=$(( $(date +%s) - s ))
[ $rc = 255 ] && [ $el -le 8 ]
ok $? "h2's link down: ssh fails in ${el}s (ConnectTimeout 5, rc $rc: $(head -n 1 "$tmp/ld.err"))"
vm_link_up 2
out=$(vm_exec 0 timeout 20 "${ssh[@]}" h2 hostname 2>&1)
[ "$out" = h2 ]; ok $? "h2's link back up: ssh works again"

# added delay on the links
if vm_delay 20; then
    s=$(date +%s%N)
    vm_exec 0 timeout 20 "${ssh[@]}" h1 true
    rc=$?
    ms=$(( ($(date +%s%N) - s) / 1000000 ))
    tc -n "${VM_NS[1]}" qdisc show dev eth0 | grep -q 'netem.*delay 20ms' && [ $rc = 0 ] && [ $ms -ge 80 ]
    ok $? "vm_delay 20: netem on every eth0, an ssh round takes ${ms} ms"
else
    ok 0 "# SKIP vm_delay: tc netem unavailable"
fi
exit $((failed > 0))
