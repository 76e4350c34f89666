#!/bin/bash
# t/dance_callers_netns.sh — t/dance_callers's cases from another network namespace: a
# host of the job that calls from an address of another machine, with the kernel's socket
# diagnostics failing (admitted: the address is not this machine's) and from another
# address than it announced (refused, saying what to do).  t/dance_netns.sh makes the
# namespaces and runs the program.
top_srcdir=${top_srcdir:-.}
DANCE_NETNS_PROG=dance_callers exec bash "$top_srcdir/t/dance_netns.sh"
