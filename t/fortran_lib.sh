# t/fortran_lib.sh — what the Fortran tests (t/fortran*.sh) source after t/tap.sh: the
# skip when gfortran is missing, gimpifort from the build tree, a private groupd endpoint
# (so their groups never meet another test's), building the test programs with gimpifort
# and with PVM 3.4.6's libraries, turning a program's "ok NAME" lines into TAP, and a
# private pvmd (its own PVM_TMP, as t/ge_race.sh) to run PVM's build under.
if ! command -v gfortran >/dev/null 2>&1; then
    echo "1..0 # SKIP gfortran is not installed"; exit 0
fi
FORT="$top_builddir/programs/gimpifort"
RUN="$top_builddir/programs/gimpirun"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
export GIMPI_GROUPD="ipc://$tmp/groupd"
mkdir -p "$tmp/g" "$tmp/p"

# nchecks NAME: how many check lines t/NAME.f prints (one per line with `call chk(` or
# fortran_group's `call gchk(`, less gchk's own call of chk)
nchecks() {
    grep -v '^[cC]' "$top_srcdir/t/$1.f" | grep 'call g\?chk(' | grep -vc 'call chk(cond,'
}

# fbuild NAME...: builds each t/NAME.f with gimpifort into $tmp/g/NAME; 0 when all built
fbuild() {
    local p rc=0
    for p in "$@"; do
        "$FORT" -o "$tmp/g/$p" "$top_srcdir/t/$p.f" "$top_srcdir/t/fortran_chk.f" \
            >"$tmp/fc.out" 2>&1 ||
            { rc=1; sed 's/^/# /' "$tmp/fc.out" | grep -v Warning | head -10; }
    done
    return $rc
}

# pvm_fortran_lib: the path of PVM 3.4.6's libfpvm3.a, if installed
pvm_fortran_lib() { ls /usr/lib/*/libfpvm3.a /usr/lib/libfpvm3.a 2>/dev/null | head -1; }

# have_pvm: PVM 3.4.6's daemon, Fortran library and header are installed
have_pvm() {
    command -v pvmd >/dev/null && [ -r /usr/include/fpvm3.h ] && [ -n "$(pvm_fortran_lib)" ]
}

# pbuild NAME...: builds each t/NAME.f against PVM into $tmp/p/NAME
pbuild() {
    local p rc=0
    for p in "$@"; do
        gfortran -fallow-argument-mismatch -w -I/usr/include -o "$tmp/p/$p" \
            "$top_srcdir/t/$p.f" "$top_srcdir/t/fortran_chk.f" \
            -lfpvm3 -lgpvm3 -lpvm3 >"$tmp/fc.out" 2>&1 ||
            { rc=1; sed 's/^/# /' "$tmp/fc.out" | head -10; }
    done
    return $rc
}

# tap_lines FILE N: one TAP line per "ok NAME" / "not ok NAME" line of FILE, N of them;
# the ones that did not come fail
tap_lines() {
    local i=0 line
    while [ $i -lt "$2" ] && IFS= read -r line; do
        case $line in
            "ok "*) i=$((i + 1)); ok 0 "${line#ok }" ;;
            "not ok "*) i=$((i + 1)); ok 1 "${line#not ok }" ;;
        esac
    done <"$1"
    while [ $i -lt "$2" ]; do i=$((i + 1)); ok 1 "check $i did not run"; done
}

# all_ok FILE N: FILE has N "ok" lines and no "not ok" one (else they are shown)
all_ok() {
    [ "$(grep -c '^ok ' "$1")" = "$2" ] && ! grep -q '^not ok ' "$1" && return 0
    grep '^not ok ' "$1" | sed 's/^/# /'
    return 1
}

# a private pvmd finding programs in $tmp/p (pvmd_start "$tmp/p", pvmd_stop)
. "$top_srcdir/t/pvmd_lib.sh"
