#!/bin/bash
# t/pvm_abi_vm.sh — gimpirun -pvm-abi on two hosts (t/vmhosts.sh: network namespaces, a
# real sshd each): Debian's hello.pvm runs as one task on each host, and each spawns
# Debian's hello_other (default placement, round-robin over the hosts).  The task on h1
# and the children started through gimpi-agent get PVM's ABI libraries from the agent
# (GIMPI_PVM_ABI=1): without them they would load the system's real libpvm3 and fail to
# reach a pvmd.  Bounded; skipped where the emulated hosts cannot be made.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
if ! command -v hello.pvm >/dev/null || ! command -v hello_other >/dev/null; then
    echo "1..0 # SKIP pvm-examples is not installed"; exit 0
fi
if ldd "$top_builddir/.libs/libgimpi.so" 2>/dev/null | grep -q libasan; then
    echo "1..0 # SKIP a sanitizer build's libgimpi cannot be loaded by unsanitized binaries"; exit 0
fi
. "${top_srcdir:-.}/t/vmhosts.sh"
vm_up 2
B=$(cd "$top_builddir" && pwd)
out=$VM_DIR/out
printf '%s\n' "${VM_ADDRS[0]}" "${VM_ADDRS[1]}" >"$VM_DIR/hosts"
echo "1..3"
vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" \
    timeout -k 10 90 "$B/programs/gimpirun" -pvm-abi -tag -hostfile "$VM_DIR/hosts" -np 2 \
    hello.pvm >"$out" 2>&1
rc=$?
okd $([ $rc = 0 ] && [ "$(grep -c "i'm t" "$out")" = 2 ]; echo $?) "hello.pvm on h0 and h1 under -pvm-abi (exit $rc)"
ok $([ "$(grep -cE 'from t[0-9a-f]+: hello, world from h[01]' "$out")" = 2 ]; echo $?) \
    "both get their hello_other's answer"
ok $(grep -qE 'hello, world from h1' "$out" && ! grep -q 'libpvm \[' "$out"; echo $?) \
    "a hello_other ran on h1, started by gimpi-agent, and nothing printed a libpvm error"
exit $((failed > 0))
