#!/bin/bash
# t/gimpirun_bind.sh — gimpirun gives each task a core of its own when they fit the CPUs
# (doc/data-plane.md, "Cores"): N tasks on N CPUs are each pinned to a different CPU and
# told so (GIMPI_BOUND); GIMPI_BIND=none and N+1 tasks run unbound; a second job while
# the first holds every core runs unbound, and is bound again once the first has ended
# (the claims end with their tasks); a GIMPI_BIND it does not know is refused; the
# agents' frames carry each remote task's place in its host's plan (t/vm_ssh.sh binds).  Own
# runtime directory: other tests' jobs hold claims of their own.
set -u
top_builddir=${top_builddir:-.}
RUN="$top_builddir/programs/gimpirun"
TASK="$top_builddir/t/job_task"
. "${top_srcdir:-.}/t/tap.sh"
echo "1..8"
export XDG_RUNTIME_DIR="$tmp/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
ncpu=$(nproc)

timeout 60 "$RUN" -np "$ncpu" "$TASK" cpus >"$tmp/a" 2>&1
ok $? "gimpirun -np $ncpu (the CPUs there are) exits 0"
n1=$(grep -c '^cpus 1 on [0-9]* bound [0-9]' "$tmp/a")
nd=$(sed -n 's/^cpus 1 on \([0-9]*\) .*/\1/p' "$tmp/a" | sort -u | wc -l)
[ "$n1" = "$ncpu" ] && [ "$nd" = "$ncpu" ]
ok $? "every task on one CPU of its own, GIMPI_BOUND set ($n1 bound, $nd CPUs)" ||
    sed 's/^/# /' "$tmp/a"

GIMPI_BIND=none timeout 60 "$RUN" -np "$ncpu" "$TASK" cpus >"$tmp/b" 2>&1
[ "$(grep -c "^cpus $ncpu on [0-9]* bound -" "$tmp/b")" = "$ncpu" ]
ok $? "GIMPI_BIND=none: every task on all $ncpu CPUs" || sed 's/^/# /' "$tmp/b"

timeout 60 "$RUN" -np $((ncpu + 1)) "$TASK" cpus >"$tmp/c" 2>&1
[ "$(grep -c "^cpus $ncpu on [0-9]* bound -" "$tmp/c")" = $((ncpu + 1)) ]
ok $? "$((ncpu + 1)) tasks on $ncpu CPUs: none bound" || sed 's/^/# /' "$tmp/c"

mkfifo "$tmp/first"
timeout 60 "$RUN" -np "$ncpu" "$TASK" cpuswait >"$tmp/first" 2>&1 &
first=$!
exec 3<"$tmp/first"
ready=0
while [ $ready -lt "$ncpu" ] && read -r -t 30 line <&3; do
    [ "$line" = ready ] && ready=$((ready + 1))
done
timeout 60 "$RUN" -np 1 "$TASK" cpus >"$tmp/d" 2>&1
grep -q "^cpus $ncpu on [0-9]* bound -" "$tmp/d"
ok $? "a second job while the first holds every core: unbound" || sed 's/^/# /' "$tmp/d"
kill -TERM $first 2>/dev/null
wait $first
exec 3<&-
timeout 60 "$RUN" -np 1 "$TASK" cpus >"$tmp/e" 2>&1
grep -q '^cpus 1 on [0-9]* bound [0-9]' "$tmp/e"
ok $? "once the first has ended, its cores are free again" || sed 's/^/# /' "$tmp/e"
GIMPI_BIND=cores timeout 60 "$RUN" -np 1 "$TASK" cpus >"$tmp/f" 2>&1
rc=$?
[ $rc = 2 ] && grep -q '^gimpirun: GIMPI_BIND="cores": say "core"' "$tmp/f" && ! grep -q '^cpus' "$tmp/f"
ok $? "GIMPI_BIND=cores (a typo): refused with one clear line, nothing started (exit $rc)"
"$top_builddir/programs/gimpi-agent" --selftest
ok $? "gimpi-agent --selftest: its frame codec, START's core place and count included"
exit $((failed > 0))
