#!/bin/bash
# t/fortran_group.sh — PVM's Fortran binding among tasks: t/fortran_group.f (join on a
# padded name, barrier, reduce with PvmSum, PvmMax, PvmMin, PvmProduct and a Fortran
# function, gather, scatter, bcast of a STRING) under gimpirun -np 4 and from the shell,
# where it spawns its 3 other members itself; t/fortran_master.f (pvmfspawn of the Fortran
# t/fortran_slave.f with where '*', a padded host name, a padded program name, an unknown
# host and program; mcast, replies, pvmftasks, pvmfnotify of the exits) from the shell and
# under gimpirun; and both, built with PVM's libraries, under a private PVM 3.4.6, where
# they pass the same checks.  Every run is bounded.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/fortran_lib.sh"
ngroup=$(nchecks fortran_group) nmaster=$(nchecks fortran_master)
echo "1..$((2 * ngroup + 2 * nmaster + 3))"
fbuild fortran_group fortran_master fortran_slave
ok $? "gimpifort builds fortran_group, fortran_master, fortran_slave"

# run NAME ARGS...: runs ARGS bounded, output in $tmp/out, errors shown when it fails
run() {
    local name=$1; shift
    timeout 60 "$@" >"$tmp/out" 2>"$tmp/err"
    echo "# $name: exit $?"
}
run "gimpirun -np 4 fortran_group" "$RUN" -np 4 "$tmp/g/fortran_group"
tap_lines "$tmp/out" "$ngroup"
run "fortran_group from the shell (spawns 3)" "$tmp/g/fortran_group"
tap_lines "$tmp/out" "$ngroup"
run "fortran_master from the shell" "$tmp/g/fortran_master"
tap_lines "$tmp/out" "$nmaster"
run "gimpirun -np 1 fortran_master" "$RUN" -np 1 "$tmp/g/fortran_master"
tap_lines "$tmp/out" "$nmaster"

if have_pvm && pbuild fortran_group fortran_master fortran_slave && pvmd_start "$tmp/p"; then
    run "PVM: fortran_group" "$tmp/p/fortran_group"
    all_ok "$tmp/out" "$ngroup"
    ok $? "PVM 3.4.6: fortran_group (spawning its 3 members) passes the same $ngroup checks"
    run "PVM: fortran_master" "$tmp/p/fortran_master"
    all_ok "$tmp/out" "$nmaster"
    ok $? "PVM 3.4.6: fortran_master passes the same $nmaster checks"
    pvmd_stop
else
    ok 0 "# SKIP PVM 3.4.6 (pvm, pvm-dev) is not installed, or its pvmd did not start"
    ok 0 "# SKIP PVM 3.4.6"
fi
exit $((failed > 0))
