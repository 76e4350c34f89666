#!/bin/sh
# t/alone-driver.sh — wraps automake's TAP driver so that a few heavy or timing-bound tests
# run alone under `make -j check`: those named below take the build tree's lock
# t/alone.lock exclusively, every other test takes it shared.  They are the tests that
# load the machine on purpose (1,000 task threads) or bound a takeover's stall in time;
# with another test beside them on 2 cores (and ASan's slowdown) they measured the other
# test, not gimpi.  Usage is the driver's: t/alone-driver.sh DRIVER --test-name NAME ...
driver=$1
shift
name=
prev=
for a in "$@"; do
    [ "$prev" = --test-name ] && name=$a
    prev=$a
done
mode=-s
case $name in
t/groupd_scale | t/groupd_standby.sh | t/groupd_restart.sh | t/vm_groupd_restart.sh | \
    t/vm_failover_kill.sh | t/vm_failover_cut.sh | t/vm_failover_twice.sh | t/vm_failover_partition.sh \
    | t/vm_failover_idle.sh \
    | t/pvm_cause)
    mode=-x ;;
esac
mkdir -p t
exec flock "$mode" t/alone.lock "${SHELL:-/bin/sh}" "$driver" "$@"
