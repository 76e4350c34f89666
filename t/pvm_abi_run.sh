#!/bin/bash
# t/pvm_abi_run.sh — Debian's PVM binaries run unchanged on gimpi under gimpirun -pvm-abi
# (PVM's ABI libraries first on LD_LIBRARY_PATH, libgimpi/pvm/pvm_abi.c): tst (groups),
# hello.pvm (pvm_spawn of hello_other, a Debian binary too: the children get the path),
# spmd (pvm_siblings ring), the Fortran frsg (reduce, scatter, gather: it asks for its
# sizes on stdin) and fspmd, each checked on its output lines; NetPIPE's NPpvm (package
# netpipe-pvm) as its receiver and transmitter, 1 byte to 8 MiB with 3 repeats, with no
# error line from either side (it finds its peer with pvm_tasks at once); and the error
# of -pvm-abi when the libraries cannot be found.  Skipped without pvm-examples.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
RUN="$top_builddir/programs/gimpirun"
ABI="$top_builddir/.libs/gimpi/pvm3"
if ! command -v hello.pvm >/dev/null || ! command -v tst >/dev/null; then
    echo "1..0 # SKIP pvm-examples is not installed"; exit 0
fi
if [ ! -r "$ABI/libpvm3.so.3" ]; then echo "1..0 # SKIP no ABI libraries built ($ABI)"; exit 0; fi
if ldd "$top_builddir/.libs/libgimpi.so" 2>/dev/null | grep -q libasan; then
    # Debian's binaries are not built with ASan, which must come first in a process
    echo "1..0 # SKIP a sanitizer build's libgimpi cannot be loaded by unsanitized binaries"; exit 0
fi
. "${top_srcdir}/t/tap.sh"
echo "1..10"
out="$tmp/out"
cd "$tmp" || exit 1
# run NAME REGEX ARGS... (stdin from $tmp/in): runs gimpirun -pvm-abi ARGS (bounded),
# checks that its output (stdout and stderr) matches every line of REGEX
run() {
    local name=$1 re=$2 miss=; shift 2
    timeout -k 5 60 "$RUN" -pvm-abi "$@" <"$tmp/in" >"$out" 2>&1
    local rc=$?
    while IFS= read -r l; do grep -qE -- "$l" "$out" || miss="$miss [$l]"; done <<<"$re"
    [ -z "$miss" ] && ! grep -qE 'libpvm \[|error|undefined symbol' "$out"
    okd $? "$name (exit $rc)"
    [ -z "$miss" ] || echo "# missing:$miss"
}
: >"$tmp/in"
run "tst: joins and leaves two groups" "joined prognosis 0, negative 0
left prognosis 0, negative 0" tst
run "hello.pvm spawns hello_other, which answers" "^i'm t[0-9a-f]+
^from t[0-9a-f]+: hello, world from" hello.pvm
run "spmd: the token goes round the ring of 3" "Pass a token through the +3 tid ring
token ring done" -np 3 spmd
printf '4\n5\n' >"$tmp/in"
run "frsg (Fortran): reduce, scatter, gather over 4" "INPUT values: nprocs = +4 , count = +5
Test OK: Sum of Squares of first +20 +integers is +2870
Test Ok: Received \( +5\.0+ +, +2\.0+ +\)" frsg
: >"$tmp/in"
run "fspmd (Fortran): the token goes round the ring of 2" "Pass a token through the +2 +tid ring
token ring done" -np 2 fspmd

# the tasks' libraries are the ABI ones, and their children's too
timeout 30 "$RUN" -pvm-abi sh -c 'echo "$LD_LIBRARY_PATH"; ldd "$(command -v hello.pvm)"' >"$out" 2>&1
abs=$(cd "$ABI" && pwd)
head -1 "$out" | grep -q "^$abs" && grep -q "libpvm3.so.3 => $abs/libpvm3.so.3" "$out"
okd $? "a task's LD_LIBRARY_PATH starts with the build tree's pvm3 folder"

# NetPIPE
if command -v NPpvm >/dev/null; then
    NP="-u 8388608 -n 3 -p 0"
    # shellcheck disable=SC2086 # options meant to split
    timeout -k 5 90 "$RUN" -pvm-abi -tag -np 1 NPpvm $NP -o "$tmp/np.recv" : \
        -np 1 NPpvm -h localhost $NP -o "$tmp/np.out" >"$out" 2>&1
    rc=$?
    ok $rc "NPpvm receiver and transmitter, 1 byte to 8 MiB (exit $rc)" || tail -5 "$out" | sed 's/^/# /'
    grep -qE '8388608 bytes +3 times' "$out" && [ "$(awk '$1 == 8388608' "$tmp/np.out" | wc -l)" = 1 ]
    ok $? "NPpvm measured every size up to 8388608 bytes ($(wc -l <"$tmp/np.out") sizes)"
    grep -vE '^\[[01]\] ( *[0-9]+: +[0-9]+ bytes +[0-9]+ times --> +[0-9.]+ Mbps in +[0-9.]+ usec|Sending output to|Now starting|Using no perturbations|Latency|Send and recv|$)' \
        "$out" >"$tmp/np.err"
    [ ! -s "$tmp/np.err" ]; ok $? "NPpvm printed no error line" || sed 's/^/# /' "$tmp/np.err" | head
else
    for k in 1 2 3; do n=$((n + 1)); echo "ok $n # SKIP netpipe-pvm is not installed"; done
fi

# -pvm-abi without the libraries: a clear error, no job
mkdir -p "$tmp/lone" && cp "$top_builddir/programs/gimpirun" "$tmp/lone/" 2>/dev/null
PATH=/usr/bin:/bin "$tmp/lone/gimpirun" -pvm-abi true >"$out" 2>&1
rc=$?
if [ $rc = 0 ]; then
    n=$((n + 1)); echo "ok $n # SKIP an installed gimpi's pvm3 folder was found"
else
    [ $rc = 2 ] && grep -q "gimpirun: -pvm-abi: no folder of PVM's ABI libraries" "$out"
    okd $? "-pvm-abi with no pvm3 folder to be found fails with the places looked (exit $rc)"
fi
exit $((failed > 0))
