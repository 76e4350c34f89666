#!/bin/bash
# t/pvm_examples_g.sh — the group examples of Debian's pvm-examples (gexamples.tar.gz,
# C): each under a private real PVM 3.4.6 pvmd, built unchanged with gimpicc under
# gimpirun, and Debian's binary under gimpirun -pvm-abi, with the same output (the
# harness, its table format and normaliser: t/examples_lib.sh, t/pvm_examples_c.sh).
. "${top_srcdir:-.}/t/examples_lib.sh" && declare -F ex_end >/dev/null ||
    { echo "Bail out! t/examples_lib.sh does not load"; exit 1; }
ex_begin
# ge and gs race by design: ge's members leave without a barrier, so a slow one may see a
# fast one gone ("doesn't match up", counted by t/ge_race.sh); gs busy-waits on
# pvm_gsize printing "waiting on kids to join" as often as the loop turns.  Those lines
# are dropped.  tjf writes gid[32] past its table (it joins 33 groups): a sanitizer build
# stops there (the NOTE column turns that into a SKIP).  trsg's answers: 4 tasks, 5 each.
# tst3: three copies join at once, each gets an instance below 3 (which, varies).
ex_table <<'ROWS'
# name    | build                                   | Debian    | start | args | stdin  | order | sed                        | note
gexamp    | gexamp=gexamples/gexamp.c               | gexamp    | 0     | 4    |        | sort  |
ge        | ge=gexamples/ge.c                       | ge        | 0     | 4    |        | sort  | /match up/d
gs        | gs=gexamples/gs.c                       | gs.pvm    | 0     | 4    |        | sort  | /^waiting on kids to join$/d
joinleave | joinleave=gexamples/joinleave.c         | joinleave | 0     | 500  |        | seq   |
thb       | thb=gexamples/thb.c tnb=gexamples/tnb.c | thb       | 0     | 4    |        | sort  |
tjf       | tjf=gexamples/tjf.c                     | tjf       | 0     |      |        | seq   |                            | index 32 out of bounds|stack-buffer-overflow
tjl       | tjl=gexamples/tjl.c                     | tjl       | 0     |      |        | seq   |
trsg      | trsg=gexamples/trsg.c                   | trsg      | 0     |      | 4\n5\n | sort  |
tst       | tst=gexamples/tst.c                     | tst       | 0     |      |        | seq   |
tst3      | tst=gexamples/tst.c                     | tst       | 3     |      |        | sort  | s/^joined prognosis [0-2], negative [0-2]$/joined prognosis I, negative I/
ROWS
ex_end
