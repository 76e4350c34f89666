#!/bin/bash
# t/pvm_examples_c.sh — the C programs of Debian's pvm-examples (examples.tar.gz) but
# the message box and message handler ones (the context ones, inherit*, are here): each
# under a private real PVM 3.4.6 pvmd, built unchanged with gimpicc under gimpirun, and
# Debian's binary under gimpirun -pvm-abi, with the same output (t/examples_lib.sh: the
# harness and its normaliser).
. "${top_srcdir:-.}/t/examples_lib.sh" && declare -F ex_end >/dev/null ||
    { echo "Bail out! t/examples_lib.sh does not load"; exit 1; }
ex_begin
# One row a program.  BUILD: the gimpi build, OUT=SOURCE[+SOURCE][:FLAGS] (children
# too, spawned by name from beside the master).  DEBIAN: the binary of pvm-examples in
# /usr/bin (the reference and the ABI run); -[PROG]: none, the reference is the source
# built against PVM (PROG, else the row's name).  START: 0, from the shell (PVM's
# README); N, N copies spawned together (console `spawn -N`, `gimpirun -np N`); @FUNC,
# a scenario function of the test runs several programs (t/pvm_examples_mb.sh).  STDIN:
# the answers the test gives (printf).  ORDER: seq, the lines in order (tids, contexts
# renumbered by first appearance); sort, several tasks print at once (tids collapsed,
# lines sorted).  SED: sed -E for what varies between runs (times, decimal tids, PVM's
# own log artefacts), or the name of a variable holding it.
# bwtest (BW): its round-trip times and rates vary (structure only; a round trip under
# a microsecond is "inf" MB/s), it prints tids in bare hex.  timing: every number is a
# time or a rate, only the lines' shape is kept.
# starter.c is not a program of the package (Makefile.aimk has no target for it) and no
# compiler takes it (`exit()` without its argument); taskf.c is the object the mailbox
# examples link (t/pvm_examples_mb.sh).
BW='s/T = +[0-9]+ \(us\) +\( *([0-9.]+|-?inf|-?nan) MB\/s\)/T = N (us) (N MB\/s)/; s/\b(4[0-9a-f]{4})\b/t\1/'
ex_table <<'ROWS'
# name    | build                                                     | Debian    | start | args      | stdin    | order | sed
hello     | hello=examples/hello.c hello_other=examples/hello_other.c | hello.pvm | 0     |           |          | seq   |
master1   | master1=examples/master1.c slave1=examples/slave1.c       | master1   | 0     |           |          | sort  |
spmd      | spmd=examples/spmd.c                                      | spmd      | 4     |           |          | sort  | s/\b[0-9]{6,}\b/D/g
ptest     | ptest=examples/ptest.c                                    | -         | 4     | 4         |          | sort  | s/^(4[0-9a-f]{4}) /t\1 /
dbwtest   | dbwtest=examples/bwtest.c:-DPACK:-DENCODE=PvmDataDefault  | dbwtest   | 2     |           |          | sort  | BW
rbwtest   | rbwtest=examples/bwtest.c:-DPACK:-DENCODE=PvmDataRaw      | rbwtest   | 2     |           |          | sort  | BW
ibwtest   | ibwtest=examples/bwtest.c:-DPACK:-DENCODE=PvmDataInPlace  | ibwtest   | 2     |           |          | sort  | BW
pbwtest   | pbwtest=examples/bwtest.c                                 | pbwtest   | 2     |           |          | sort  | BW
timing    | timing=examples/timing.c timing_slave=examples/timing_slave.c | timing | 0     |           |          | sort  | s/\bt[0-9a-f]{5}\b/tid/g; s/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g
gexample  | gexample=examples/gexample.c                              | gexample  | 0     |           | 100\n4\n | seq   |
gexample3 | gexample=examples/gexample.c                              | gexample  | 3     |           |          | sort  |
inherit1  | inherita=examples/inherita.c inherit1=examples/inherit1.c inherit2=examples/inherit2.c | inherita | 0 | inherit1 | | seq |
inherit3  | inherita=examples/inherita.c inherit3=examples/inherit3.c inherit2=examples/inherit2.c | inherita | 0 | inherit3 | | seq |
inheritb  | inheritb=examples/inheritb.c inherit2=examples/inherit2.c | inheritb  | 0     |           |          | seq   |
ROWS

# every binary of Debian's pvm-examples is a row (its Debian or build column) of one of
# the four tables, or one of the three that come from elsewhere in PVM's tree
covered=$(sed -n '/^ex_table/,/^ROWS$/p' "$top_srcdir"/t/pvm_examples_[cgfm]*.sh | grep -v '^#' |
          awk -F'|' 'NF > 3 { print $3; print $2 }' | tr ' ' '\n' | sed 's/=.*//' | grep .)
missing=
for b in $(dpkg -L pvm-examples 2>/dev/null | grep '^/usr/bin/' | sed 's|.*/||'); do
    case $b in
    xep)     skip "xep: PVM's X11 Mandelbrot front end (pvm3/xep, not in the tarballs)" \
                  "needs an X display" ;;
    mtile)   skip "mtile: xep's worker, spawned by xep with the tiles to compute (pvm3/xep)" ;;
    srm.pvm) skip "srm.pvm: PVM's sample resource manager (pvm3/src, not in the tarballs)" \
                  "takes over a pvmd's scheduling (pvm_reg_rm): gimpi has no pvmd, PvmNotImpl" ;;
    *) echo "$covered" | grep -qxF "$b" || missing="$missing $b" ;;
    esac
done
[ -z "$missing" ]
ok $? "every other binary of pvm-examples has a row in t/pvm_examples_*.sh${missing:+ (not:$missing)}"
ex_end
