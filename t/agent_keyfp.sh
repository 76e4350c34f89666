#!/bin/bash
# t/agent_keyfp.sh — what gimpirun sends an agent first over an engine not known to encrypt
# (a GIMPI_RSH that is not ssh; srun, t/vm_slurm.sh): the key's fingerprint, never the key,
# and the agent takes this host's own key when it is the job's, or stops the job, saying
# whose key differs and what to do.  The other host is emulated as in t/pvm_export_vm.sh
# (a hostfile address that is not this machine's; t/rsh_here.sh runs the agent here),
# behind a wrapper that records what the agent reads.  Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
echo "1..6"
B=$(cd "$top_builddir" && pwd)
RSH="$(cd "${top_srcdir:-.}" && pwd)/t/rsh_here.sh"
printf 'localhost\nother ip=192.0.2.77\n' >"$tmp/hosts"
# two key files; the agent's own is KEY2 when the wrapper is told so
for k in 1 2; do
    (umask 077; { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; echo; } >"$tmp/key$k")
done
cat >"$tmp/rsh_rec.sh" <<EOS
#!/bin/sh
# records the agent's stdin (gimpirun's frames), then runs it as t/rsh_here.sh would
[ -n "\${AGENT_KEY_FILE:-}" ] && export GIMPI_KEY_FILE="\$AGENT_KEY_FILE"
tee -a "$tmp/frames" | "$RSH" "\$@"
EOS
chmod +x "$tmp/rsh_rec.sh"
out="$tmp/out"
# run [AGENT_KEY_FILE]: a job of a task on each host, gimpirun with key1
run() {
    : >"$tmp/frames"
    (cd "$tmp" && unset GIMPI_GROUPD GIMPI_KEY_FD && timeout 120 env GIMPI_RSH="$tmp/rsh_rec.sh" \
        GIMPI_KEY_FILE="$tmp/key1" AGENT_KEY_FILE="${1:-}" GIMPI_PATH="$B/t" \
        "$B/programs/gimpirun" -hostfile "$tmp/hosts" -np 2 "$B/t/vm_task" config) \
        >"$out" 2>&1
    rc=$?
}
hexof() { od -An -tx1 -v "$1" | tr -d ' \n'; }

run
[ $rc = 0 ] && [ "$(count 'hosts 2 narch 1')" = 2 ]
okd $? "GIMPI_RSH not an ssh: the job runs on both hosts with the key file they share (exit $rc)"
key1=$(head -c 64 "$tmp/key1")
! hexof "$tmp/frames" | grep -q "$key1"
ok $? "the agent's stdin never held the key's 32 bytes"
fp=$(GIMPI_KEY_FILE="$tmp/key1" "$B/programs/gimpi-stat" --fingerprint 2>/dev/null | grep -Eo '[0-9a-f]{8}' | head -1)
[ -n "$fp" ] && grep -aq "$fp" "$tmp/frames"
ok $? "it held the key's fingerprint ($fp)"

run "$tmp/key2"
[ $rc != 0 ] && [ $rc != 124 ]
okd $? "the other host's own key differs: the job fails at once (exit $rc)"
has "is not the job's (fingerprint $fp)" && has "$tmp/key2"
okd $? "... the agent names its key file and the job's fingerprint"
has "give every host the same ~/.gimpi/key"
ok $? "... and says what to do"
exit $((failed > 0))
