#!/bin/bash
# t/pvm_examples_f.sh — the Fortran programs of Debian's pvm-examples (examples.tar.gz
# and gexamples.tar.gz): each under a private real PVM 3.4.6 pvmd (Debian's binaries
# fgexample, fmaster1, fspmd, hitc, frsg), built unchanged with gimpifort under gimpirun,
# and Debian's binary under gimpirun -pvm-abi, with the same output (t/examples_lib.sh;
# the table's columns: t/pvm_examples_c.sh).  Skipped only without gfortran.
. "${top_srcdir:-.}/t/examples_lib.sh" && declare -F ex_end >/dev/null ||
    { echo "Bail out! t/examples_lib.sh does not load"; exit 1; }
ex_begin
# list-directed output (print *) pads numbers with blanks: they are squeezed.  Decimal
# tids (fspmd's ring, hitc's "result from tid") are D; hitc's task sizes are random (its
# synthetic workload), so they are N.  frsg's answers: 4 tasks, 5 each.
ex_table <<'ROWS'
# name     | build                                                  | Debian    | start | args | stdin    | order | sed
fgexample  | fgexample=examples/gexample.f                          | fgexample | 0     |      |          | seq   | s/ +/ /g
fmaster1   | fmaster1=examples/master1.f fslave1=examples/slave1.f  | fmaster1  | 0     |      |          | sort  | s/ +/ /g
fspmd      | fspmd=examples/spmd.f                                  | fspmd     | 4     |      |          | sort  | s/ +/ /g; s/\b[0-9]{6,}\b/D/g
hitc       | hitc=examples/hitc.f hitc_slave=examples/hitc_slave.f  | hitc      | 0     |      |          | sort  | s/ +/ /g; s/\b[0-9]{6,}\b/D/g; s/size: -?[0-9]+/size: N/
frsg       | frsg=gexamples/frsg.f                                  | frsg      | 0     |      | 4\n5\n   | sort  | s/ +/ /g
ROWS
ex_end
