#!/bin/bash
# t/dyn_auth_netns.sh — t/dyn_auth's strangers from another machine: the victim and its
# friend listen on a veth address of this namespace (203.0.113.1), every stranger (forged
# introductions, 500 of them, 900 idle connections, a task of another key) runs in a
# network namespace of its own (203.0.113.2) through `ip netns exec`, as user nobody when
# root.  The same checks as t/dyn_auth hold: refusals, no growth, caps, the real pair's
# traffic.  Skips when network namespaces are not available (needs root and iproute2).
# TEST-NET-3 (203.0.113.0/24): t/groupd_auth.sh puts TEST-NET-2 on a veth of this namespace
# too, and the two may run at once (make -j): one subnet each, or connections land in the
# other test's namespace.
set -u
top_builddir=${top_builddir:-.}
P=gdyn$$
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! ip netns add "$P" 2>/dev/null; then
    echo "1..0 # SKIP network namespaces unavailable (needs root and iproute2)"
    exit 0
fi
trap 'ip link del "$P-a" 2>/dev/null; ip netns del "$P" 2>/dev/null' EXIT
ip link add "$P-a" type veth peer name "$P-b" && ip link set "$P-b" netns "$P" &&
    ip addr add 203.0.113.1/24 dev "$P-a" && ip link set "$P-a" up &&
    ip -n "$P" addr add 203.0.113.2/24 dev "$P-b" && ip -n "$P" link set "$P-b" up &&
    ip -n "$P" link set lo up || { echo "1..0 # SKIP cannot make a veth pair"; exit 0; }
DYN_AUTH_ADDR=203.0.113.1 DYN_AUTH_NETNS="$P" "$top_builddir/t/dyn_auth"
