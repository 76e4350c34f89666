#!/bin/sh
# t/rsh_here.sh — a stand-in for ssh as GIMPI_RSH, for tests that emulate another host on
# this machine: it takes ssh's calling convention (options, host, command), drops the
# options and the host, and runs the command here.  The hostfile gives the emulated host
# an ip= that is not this machine's, so gimpirun treats it as another host (an agent).
while [ $# -gt 1 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
shift
exec sh -c "$*"
