#!/bin/bash
# t/dance_netns.sh — strangers from another network namespace at the hosts' meeting: the
# hosts of a job listen on 192.0.2.1-3 (TEST-NET-1, never routed) in one namespace, the
# stranger calls from 192.0.2.99 in another, joined by a veth pair; t/dance_strangers
# runs the cases ("netns NS") and prints the TAP (t/dance_callers instead when
# DANCE_NETNS_PROG names it: t/dance_callers_netns.sh).  Namespaces are created and
# removed here; the test skips when not root or when the kernel refuses them.
set -u
top_builddir=${top_builddir:-.}
P=gdance$$
PROG="$top_builddir/t/${DANCE_NETNS_PROG:-dance_strangers}"

cleanup() {
    for ns in "$P-h" "$P-s"; do
        ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
        ip netns del "$ns" 2>/dev/null
    done
}
trap cleanup EXIT

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns add "$P-h" 2>/dev/null; then
    echo "1..0 # SKIP network namespaces unavailable (needs root and iproute2)"
    exit 0
fi
if ! ip netns add "$P-s" || ! ip link add "$P-a" type veth peer name "$P-b"; then
    echo "1..0 # SKIP no veth support"
    exit 0
fi
ip link set "$P-a" netns "$P-h"
ip link set "$P-b" netns "$P-s"
for a in 1 2 3; do ip -n "$P-h" addr add "192.0.2.$a/24" dev "$P-a"; done
ip -n "$P-s" addr add 192.0.2.99/24 dev "$P-b"
for ns in "$P-h" "$P-s"; do ip -n "$ns" link set lo up; done
ip -n "$P-h" link set "$P-a" up
ip -n "$P-s" link set "$P-b" up
ip netns exec "$P-h" timeout 300 "$PROG" netns "$P-s"
