#!/bin/bash
# t/examples.sh — the example programs of examples/ do what their comments promise:
# pvm_master_worker under gimpirun (4 tasks, 1 task, 7 tasks on 2 cores) and from the shell
# prints its check line with the exact sums; pvm_spawn_farm, started from the shell and
# by gimpirun -np 1, spawns workers by bare name and gets the prime count right; bad
# arguments are refused; no group is left behind in groupd; and the README's demo
# (examples/demo.sh) passes.  Uses a groupd of its own (stopped at the end); every run
# is bounded.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "${top_srcdir}/t/tap.sh"
B=$top_builddir
RUN="$B/programs/gimpirun"
MW="$B/examples/pvm_master_worker"
FARM="$B/examples/pvm_spawn_farm"
echo "1..16"

# our own groupd, in the foreground, stopped by tap.sh's exit trap
mkfifo "$tmp/gd.fifo"
"$B/groupd/groupd" --endpoint "ipc://$tmp/groupd" --foreground >"$tmp/gd.fifo" 2>"$tmp/gd.err" &
exec 3<"$tmp/gd.fifo"
read -r -t 20 -u 3 ep; exec 3<&-
[ "$ep" = "ipc://$tmp/groupd" ]; ok $? "a private groupd serves ($ep)"
export GIMPI_GROUPD="ipc://$tmp/groupd"

# run NAME EXPECTED_EXIT REGEX CMD...: runs CMD bounded, checks its exit status and that
# a stdout line matches REGEX
run() {
    local name=$1 want=$2 re=$3; shift 3
    timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" = "$want" ] && grep -Eq -- "$re" "$tmp/out"; then ok 0 "$name"; else
        ok 1 "$name (exit $rc, wanted $want)"; sed 's/^/# /' "$tmp/out" "$tmp/err" | head -20; fi
}
quiet() { [ ! -s "$tmp/err" ]; ok $? "... and nothing on stderr"
          [ -s "$tmp/err" ] && sed 's/^/# /' "$tmp/err" | head -10; }

sum="sum of k\*k for k = 1\.\.100000: reduce 333338333350000, gather 333338333350000, expected 333338333350000; largest term 10000000000: OK$"
run "master-worker: gimpirun -np 4, n = 100000" 0 "^master-worker: 4 tasks, $sum" "$RUN" -np 4 "$MW" 100000
quiet
[ "$(grep -c '^master-worker:' "$tmp/out")" = 1 ]; ok $? "... only the master printed"
run "master-worker: gimpirun -np 1 (the sole member does not broadcast)" 0 \
    "^master-worker: 1 task, $sum" "$RUN" -np 1 "$MW" 100000
run "master-worker: gimpirun -np 7 on 2 cores, n = 1000" 0 \
    "^master-worker: 7 tasks, sum of k\*k for k = 1\.\.1000: reduce 333833500, gather 333833500, expected 333833500; largest term 1000000: OK$" \
    "$RUN" -np 7 "$MW" 1000
run "master-worker from the shell: a group of one" 0 "^master-worker: 1 task, .*: OK$" "$MW" 1000
quiet
# refused NAME CMD...: CMD exits 2 with its usage on stderr
refused() {
    local name=$1; shift
    timeout 30 "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ $rc = 2 ] && grep -q "^usage: " "$tmp/err"; ok $? "$name (exit $rc, usage on stderr)"
}
refused "master-worker refuses n = 0" "$MW" 0

farm="spawned 3 workers of \"pvm_spawn_farm\" \(tids t[0-9a-f]+\.\.t[0-9a-f]+\), a missing program gave PvmNoFile; primes below 20000: 2262, expected 2262: OK$"
run "spawn-farm from the shell: 3 workers spawned by bare name" 0 "^spawn-farm: master t[0-9a-f]+ $farm" "$FARM" 3 20000
quiet
run "spawn-farm under gimpirun -np 1" 0 "^spawn-farm: master t[0-9a-f]+ $farm" "$RUN" -np 1 "$FARM" 3 20000
refused "spawn-farm refuses 0 workers" "$FARM" 0

# every example left its groups: groupd has none
timeout 30 "$B/programs/gimpi-stat" --json >"$tmp/stat" 2>&1 && grep -q '"groups":' "$tmp/stat" &&
    ! grep -Eq '"name":"(mw|farm)"' "$tmp/stat"
ok $? "no example left a group behind in groupd (gimpi-stat --json)"
[ $failed = 0 ] || sed 's/^/# /' "$tmp/stat" | head -5

# the README's demo
run "examples/demo.sh (./setup.sh demo) passes" 0 "^demo: the PVM examples printed their check lines" \
    "$top_srcdir/examples/demo.sh" "$B"
grep -q "^master-worker: 4 tasks, .*: OK$" "$tmp/out" && grep -q "^spawn-farm: .*: OK$" "$tmp/out" &&
    grep -q "^demo: impi-server and the 3 clients finished" "$tmp/out"
ok $? "... with the IMPI startup part and both examples' check lines"
exit $((failed > 0))
