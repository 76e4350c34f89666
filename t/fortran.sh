#!/bin/bash
# t/fortran.sh — PVM's Fortran binding in one task: include/fpvm3.h is fixed-form
# Fortran 77 with PVM 3.4.6's constants; gimpifort builds the test programs, which call
# all 75 Fortran names libgimpi.so exports (every name of PVM's libfpvm3 among them);
# t/fortran_self.f (strings with trailing and leading blanks and blanks only, every
# datatype packed and unpacked, bad datatypes, pvmfconfig's one host per call ...) passes
# under gimpi and, built with PVM's -lfpvm3 -lgpvm3 -lpvm3, under a private PVM 3.4.6;
# t/fortran_calls.f (the other calls, the cases PVM does not share); a plain gfortran
# link with -lfpvm3 -lgpvm3 -lpvm3 against an installed gimpi; the wrappers' link lines.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/fortran_lib.sh"
nself=$(nchecks fortran_self) ncalls=$(nchecks fortran_calls)
echo "1..$((nself + ncalls + 14))"

# the header: strict fixed form, PVM's names and values
printf "      program h\n      include 'fpvm3.h'\n      print *, PvmNoGroup\n      end\n" >"$tmp/h.f"
gfortran -std=f95 -pedantic -ffixed-form -ffixed-line-length-72 -Wall -Werror -fsyntax-only \
    -I"$top_srcdir/include" "$tmp/h.f" 2>"$tmp/h.err"
ok $? "fpvm3.h compiles as strict fixed-form Fortran (columns 7-72)" || sed 's/^/# /' "$tmp/h.err"
# NAME=VALUE of every parameter, lowercase
params() { tr 'A-Z' 'a-z' <"$1" | grep -v '^c' | grep -o 'parameter *(.*)' |
           sed 's/parameter *( *//; s/ *) *$//; s/ //g' | tr ',' '\n' | sort -u; }
# within THEIRS OURS MIN TEXT: every line of file THEIRS (at least MIN) is in OURS; one ok
within() {
    local gone
    gone=$(comm -23 "$1" "$2")
    [ -z "$gone" ] && [ "$(wc -l <"$1")" -ge "$3" ]
    ok $? "$4" || echo "# missing: $(echo $gone)"
}
if [ -r /usr/include/fpvm3.h ]; then
    params /usr/include/fpvm3.h >"$tmp/theirs"
    params "$top_srcdir/include/fpvm3.h" >"$tmp/ours"
    within "$tmp/theirs" "$tmp/ours" 100 \
        "each of PVM's $(wc -l <"$tmp/theirs") fpvm3.h constants has PVM's value in ours"
else
    ok 0 "# SKIP PVM's fpvm3.h is not installed"
fi

fbuild fortran_self fortran_calls fortran_group fortran_master fortran_slave
ok $? "gimpifort builds the five test programs"
# every exported Fortran name is called by one of them
nm -D --defined-only "$top_builddir/.libs/libgimpi.so" | awk '{ print $3 }' |
    grep -E '^pvmf[a-z_]*_$|^pvm(sum|max|min|product)_$' | sort >"$tmp/exported"
for p in fortran_self fortran_calls fortran_group fortran_master fortran_slave; do
    nm "$tmp/g/$p" 2>/dev/null | awk '$1 == "U" { print $2 }'
done | sort -u >"$tmp/used"
within "$tmp/exported" "$tmp/used" 75 \
    "the test programs call all $(wc -l <"$tmp/exported") Fortran names libgimpi exports"
lib=$(pvm_fortran_lib)
if [ -n "$lib" ]; then
    nm "$lib" | awk '$2 == "T" { print $3 }' | grep -Ev '^(ctofstr|ftocstr)$' | sort -u >"$tmp/theirs"
    within "$tmp/theirs" "$tmp/exported" 60 \
        "every one of the $(wc -l <"$tmp/theirs") calls of PVM's libfpvm3 is among them"
else
    ok 0 "# SKIP PVM's libfpvm3.a is not installed"
fi

# one task from the shell
timeout 60 "$tmp/g/fortran_self" >"$tmp/out" 2>"$tmp/err"
echo "# fortran_self exit $?"
tap_lines "$tmp/out" "$nself"
grep -q "^libpvm \[t[0-9a-f]*\]: fself   : " "$tmp/err"
ok $? "pvmfperror printed 'fself   ' as given, and did not crash" || sed 's/^/# /' "$tmp/err" | head -5
timeout 60 "$tmp/g/fortran_calls" >"$tmp/out" 2>"$tmp/err"
echo "# fortran_calls exit $?"
tap_lines "$tmp/out" "$ncalls"

# the same checks under PVM 3.4.6
if have_pvm && pbuild fortran_self && pvmd_start "$tmp/p"; then
    timeout 60 "$tmp/p/fortran_self" >"$tmp/pout" 2>"$tmp/perr"
    all_ok "$tmp/pout" "$nself"
    ok $? "PVM 3.4.6: fortran_self built with -lfpvm3 -lgpvm3 -lpvm3 passes the same $nself checks"
    grep -q "^libpvm \[t[0-9a-f]*\]: fself   : " "$tmp/perr"
    ok $? "PVM 3.4.6: pvmfperror printed 'fself   ' as given too"
    pvmd_stop
else
    ok 0 "# SKIP PVM 3.4.6 (pvm, pvm-dev) is not installed, or its pvmd did not start"
    ok 0 "# SKIP PVM 3.4.6"
fi

# plain gfortran -lfpvm3 -lgpvm3 -lpvm3 against an installed gimpi (the link names)
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s -C "$top_builddir" DESTDIR="$tmp/inst" \
    install-libLTLIBRARIES install-includeHEADERS install-pvmlinkDATA >"$tmp/make.out" 2>&1
ilib=$(dirname "$(find "$tmp/inst" -name libfpvm3.so | head -1)")
iinc=$(dirname "$(find "$tmp/inst" -name fpvm3.h | head -1)")
grep -q "INPUT(-lgimpi)" "$ilib/libfpvm3.so" 2>/dev/null
ok $? "make install puts fpvm3.h and the linker script libfpvm3.so beside libgimpi" ||
    sed 's/^/# /' "$tmp/make.out" | tail -5
read -r _ flags < <("$top_builddir/programs/gimpicc" -show -c x.c)
san=$(printf '%s\n' $flags | grep -- '^-fsanitize' | tr '\n' ' ')
gfortran $san -fallow-argument-mismatch -w -I"$iinc" -o "$tmp/plain" \
    "$top_srcdir/t/fortran_self.f" "$top_srcdir/t/fortran_chk.f" -L"$ilib" -lfpvm3 -lgpvm3 -lpvm3 >"$tmp/cc.out" 2>&1 &&
    readelf -d "$tmp/plain" | grep -q 'NEEDED.*libgimpi'
ok $? "gfortran prog.f -lfpvm3 -lgpvm3 -lpvm3 links libgimpi" || sed 's/^/# /' "$tmp/cc.out" | head
LD_LIBRARY_PATH="$ilib" timeout 60 "$tmp/plain" >"$tmp/out" 2>/dev/null
all_ok "$tmp/out" "$nself"; ok $? "... and passes the $nself checks"

# the wrappers' link lines
show=$("$FORT" -show -o x x.f -lfpvm3 -lgpvm3 -lpvm3)
case "$show" in
    *"-fallow-argument-mismatch "*"x.f -lgimpi -lgimpi -lgimpi -L"*) ok 0 "gimpifort: $show" ;;
    *) ok 1 "gimpifort -show: $show" ;;
esac
[ "$("$top_builddir/programs/gimpif77" -show -c x.f)" = "$("$FORT" -show -c x.f)" ]
ok $? "gimpif77 is gimpifort"
show=$("$top_builddir/programs/gimpicc" -show -o x x.c -lfpvm3)
case "$show" in *"x.c -lgimpi -L"*) ok 0 "gimpicc turns -lfpvm3 into -lgimpi" ;;
                *) ok 1 "gimpicc -show: $show" ;; esac
exit $((failed > 0))
