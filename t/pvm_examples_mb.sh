#!/bin/bash
# t/pvm_examples_mb.sh — the message box and message handler examples of Debian's
# pvm-examples (examples.tar.gz: task0, task1, task_end, gmbi, lmbi, rme with taskf.c,
# mbox, mhf_server and mhf_tickle): several programs of one scenario share the virtual
# machine (PVM's pvmd; gimpi's groupd), run under a private real PVM 3.4.6 pvmd, built
# unchanged with gimpicc under gimpirun, and Debian's binaries under gimpirun -pvm-abi,
# with the same output (t/examples_lib.sh; the table's columns: t/pvm_examples_c.sh).
. "${top_srcdir:-.}/t/examples_lib.sh" && declare -F ex_end >/dev/null ||
    { echo "Bail out! t/examples_lib.sh does not load"; exit 1; }
ex_begin

# task0 offers the service "svc" (a mailbox entry and a new context) and serves until
# task_end sends END; task1 finds it and is welcomed; gmbi lists the entry by name (PVM's
# own pvmgs entry is left out by the pattern)
scn_tasks() {
    local mode=$1 dir=$2 s="$OUT/task0.$1" t0 st
    EX_BUF="stdbuf -oL" ex_launch "$mode" 0 "$dir/task0" svc d </dev/null >"$s" 2>&1 &
    t0=$!
    if ex_wait_line "$s" "waiting for service request"; then
        ex_step "$mode" "$dir" task1 svc 0 d </dev/null
        ex_step "$mode" "$dir" gmbi svc </dev/null
        ex_step "$mode" "$dir" task_end svc 0 </dev/null
    else
        echo "task0 never waited for a request"; kill "$t0"
    fi
    wait "$t0" && st=ok || st=failed; echo "== task0 svc d ($st)"; cat "$s"
}
# lmbi leaves 3 persistent entries t<tid>lmbi0..2, gmbi lists them, rme removes each
# (and a name that does not exist), gmbi finds none
scn_lmbi() {
    local mode=$1 dir=$2 t k
    ex_step "$mode" "$dir" lmbi 3 p e </dev/null | tee "$tmp/lmbi.out"
    t=$(grep -o "^lmbi: t[0-9a-f]* " "$tmp/lmbi.out" | head -1 | cut -c7- | tr -d ' ')
    ex_step "$mode" "$dir" gmbi "${t}lmbi*" </dev/null
    for k in 0 1 2; do ex_step "$mode" "$dir" rme "${t}lmbi$k" 0 </dev/null; done
    ex_step "$mode" "$dir" rme "${t}lmbi9" 0 </dev/null
    ex_step "$mode" "$dir" gmbi "${t}lmbi*" </dev/null
}
# mbox (no Debian binary): a default entry, a persistent one, then queries, its class's
# info, a delete by another task and a last query
scn_mbox() {
    local mode=$1 dir=$2 a
    for a in "" pers "query 0" "info mbox_test" "delete 0" "query 0"; do
        ex_step "$mode" "$dir" mbox $a </dev/null
    done
}
# mhf_server registers in the mailbox and prints libpvm's handler table; mhf_tickle, fed
# on stdin, loads string_catcher1 for tag 77 in the server's context, hits it with
# "hello", asks for the table (PMH), and tells the server to go (SEAT)
scn_mhf() {
    local mode=$1 dir=$2 s="$OUT/mhf_server.$1" sv ctx st
    EX_BUF="stdbuf -oL" ex_launch "$mode" 0 "$dir/mhf_server" </dev/null >"$s" 2>&1 &
    sv=$!
    if ex_wait_line "$s" "just inserted server"; then
        ctx=$(sed -nE 's/.*just inserted server .* with context (-?[0-9]+)\..*/\1/p' "$s" | head -1)
        printf '1\n77\n%s\n1\n4\n77\n%s\n1\nhello\n0\n9\n' "$ctx" "$ctx" |
            ex_step "$mode" "$dir" mhf_tickle
    else
        echo "mhf_server never registered"; kill "$sv"
    fi
    wait "$sv" && st=ok || st=failed; echo "== mhf_server ($st)"; cat "$s"
}
# the task ids of gmbi's table and task_end's in bare hex; mhf_server's table: libpvm's
# own handlers (context 524287, PVM's system messages) are PVM's inside, dropped, and the
# handler numbers with them; blanks squeezed; the tid mhf_tickle prints in decimal is D
TASKS='s/ id: (4[0-9a-f]{4}) / id: t\1 /; s/tid: (4[0-9a-f]{4}) /tid: t\1 /'
MHF='/header\.ctx = +524287 /d; s/ +/ /g; s/ = [0-9]{6,},/ = D,/; s/(dhandles\[ ?|handles\[ ?|mhid = |handle = |handles = )[0-9]+/\1N/g'
ex_table <<'ROWS'
# name   | build                                                                  | Debian | start      | args | stdin | order | sed
tasks    | task0=examples/task0.c+examples/taskf.c task1=examples/task1.c+examples/taskf.c task_end=examples/task_end.c+examples/taskf.c gmbi=examples/gmbi.c+examples/taskf.c | task0 | @scn_tasks | | | seq | TASKS
lmbi     | lmbi=examples/lmbi.c+examples/taskf.c gmbi=examples/gmbi.c+examples/taskf.c rme=examples/rme.c+examples/taskf.c | lmbi | @scn_lmbi | | | seq |
mbox     | mbox=examples/mbox.c                                                   | -      | @scn_mbox  |      |       | seq   |
mhf      | mhf_server=examples/mhf_server.c mhf_tickle=examples/mhf_tickle.c      | mhf_server | @scn_mhf |  |       | seq   | MHF
ROWS
ex_end
