#!/bin/bash
# t/pvm_export_vm.sh — the calls that reach another host of a virtual machine: pvm_spawn
# passes PVM_EXPORT and the variables it names (their values in the spawner at the spawn,
# not gimpirun's) to a child on another host and no other variable of the spawner's;
# pvm_hostsync reads the other host's clock through its agent (delta near 0: one machine).
# The other host is emulated: a hostfile names it with an address that is not this
# machine's, and GIMPI_RSH is a stand-in for ssh that runs the agent here (t/rsh_here.sh).
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
echo "1..5"
B=$(cd "$top_builddir" && pwd)
RSH="$(cd "${top_srcdir:-.}" && pwd)/t/rsh_here.sh"
printf 'localhost\nother ip=192.0.2.77\n' >"$tmp/hosts"
out="$tmp/out"
(cd "$tmp" && unset GIMPI_GROUPD FOO BAR PVM_EXPORT \
    && timeout 120 env GIMPI_RSH="$RSH" GIMPI_PATH="$B/t" \
       "$B/programs/gimpirun" -hostfile "$tmp/hosts" -np 1 "$B/t/pvm_export" vm) \
    >"$out" 2>"$tmp/err"
rc=$?
[ $rc = 0 ] && [ "$(count "child:")" = 2 ]; okd $? "a child on each of the two hosts (exit $rc)"
has "host 0 child: FOO=foo value BAR=bar value PVM_EXPORT=FOO"
okd $? "this host: the child has the spawner's whole environment"
has "host 1 child: FOO=foo value BAR=(unset) PVM_EXPORT=FOO"
okd $? "the other host: FOO (exported, set after gimpirun started) and PVM_EXPORT, not BAR"
has "host 0 hostsync 0 delta 0.000000"; okd $? "hostsync of this host: delta 0"
grep -Eq "^host 1 hostsync 0 delta (0|-1)\.[0-9]{6}$" "$out"
okd $? "hostsync of the other host: its agent answers, delta within 1 s (one machine)"
[ "$failed" = 0 ] || sed 's/^/# err: /' "$tmp/err" | head -20
exit $((failed > 0))
