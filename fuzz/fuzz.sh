#!/bin/sh
# fuzz/fuzz.sh — builds and runs gimpi's libFuzzer targets; called by `make fuzz` and
# `make fuzz-run` (fuzz/Makemodule.am), from the top of the build directory.
#
#   fuzz.sh build TARGET...          compile fuzz/TARGET.c + the libgimpi sources with clang
#                                    into fuzz/bin/TARGET (objects in fuzz/obj/, rebuilt
#                                    only when a source or a header is newer)
#   fuzz.sh run SECONDS TARGET...    run each target for SECONDS (0: only replay the seeds)
#                                    on a scratch copy of fuzz/corpus/TARGET/; writes
#                                    fuzz/run/TARGET.log and an automake-style
#                                    fuzz/run/TARGET.trs (:test-result: PASS or FAIL);
#                                    dictionary: fuzz/TARGET.dict, else fuzz/impi.dict
#
# The build takes its settings from the environment, set by the Makefile: srcdir, FUZZ_CC,
# FUZZ_FLAGS, FUZZ_CPPFLAGS, FUZZ_LIBS, FUZZ_LIBSRC (paths relative to srcdir; only
# the .c files are compiled).
set -u

# Prints a message on stderr and stops.
die() { echo "fuzz: $*" >&2; exit 1; }

# Compiles $1 (a .c file) into $2 when $2 is missing or older than $1 or the newest header.
compile() {
    if [ ! -e "$2" ] || [ "$1" -nt "$2" ] || { [ -n "$newest_h" ] && [ "$newest_h" -nt "$2" ]; }; then
        echo "  FUZZCC   $2"
        # shellcheck disable=SC2086 # flag lists are meant to split
        $FUZZ_CC $FUZZ_FLAGS $FUZZ_CPPFLAGS $3 -c "$1" -o "$2" || exit 1
    fi
}

# build TARGET...: the objects of the library once, then one binary per target.
build() {
    [ -n "${FUZZ_CC:-}" ] || die "no clang found by configure: install clang (Debian: apt-get install clang libclang-rt-dev) and re-run configure"
    srcdir=${srcdir:-.}
    mkdir -p fuzz/bin fuzz/obj
    newest_h=$(ls -t "$srcdir"/libgimpi/*.h "$srcdir"/include/*.h "$srcdir"/fuzz/*.h config.h 2>/dev/null | head -n 1)
    libobjs=
    for src in ${FUZZ_LIBSRC:-}; do
        case $src in *.c) ;; *) continue ;; esac
        obj=fuzz/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
        # library code: warnings shown, not fatal (gcc's -Werror build is the judge)
        compile "$srcdir/$src" "$obj" "-Wall -Wextra"
        libobjs="$libobjs $obj"
    done
    for t in "$@"; do
        t=${t##*/}
        [ -f "$srcdir/fuzz/$t.c" ] || die "no source fuzz/$t.c for target $t"
        compile "$srcdir/fuzz/$t.c" "fuzz/obj/$t.o" "-std=c11 -Wall -Wextra -Werror"
        bin=fuzz/bin/$t
        relink=no
        [ -e "$bin" ] || relink=yes
        for o in "fuzz/obj/$t.o" $libobjs; do [ "$o" -nt "$bin" ] && relink=yes; done
        if [ $relink = yes ]; then
            echo "  FUZZLD   $bin"
            # shellcheck disable=SC2086
            $FUZZ_CC $FUZZ_FLAGS -o "$bin" "fuzz/obj/$t.o" $libobjs ${FUZZ_LIBS:-} || exit 1
        fi
    done
}

# run SECONDS TARGET...: a bounded run of each target; non-zero exit if any failed.
run() {
    secs=$1; shift
    srcdir=${srcdir:-.}
    failed=0
    mkdir -p fuzz/run
    for t in "$@"; do
        t=${t##*/}
        dir=fuzz/run/$t
        rm -rf "$dir" "$dir.log" "$dir.trs"
        mkdir -p "$dir/corpus" "$dir/artifacts"
        seeds=$srcdir/fuzz/corpus/$t
        [ -d "$seeds" ] || { echo "fuzz: warning: no seed corpus $seeds" >&2; seeds=; }
        # a target's own dictionary fuzz/TARGET.dict, else the shared IMPI one
        dict=$srcdir/fuzz/$t.dict
        [ -f "$dict" ] || dict=$srcdir/fuzz/impi.dict
        [ -f "$dict" ] && dict="-dict=$dict" || dict=
        if [ "$secs" -gt 0 ]; then
            limit="-max_total_time=$secs"
        else
            limit="-runs=0"
        fi
        start=$(date +%s)
        # libFuzzer writes new inputs to the first corpus directory: a scratch one, never
        # the committed seeds.  The outer timeout is only a safety net.
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
        timeout -k 10 $((secs + 120)) "fuzz/bin/$t" $limit $dict -timeout=10 -rss_limit_mb=2048 \
            -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
            "$dir/corpus" $seeds >"$dir.log" 2>&1
        rc=$?
        took=$(( $(date +%s) - start ))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir.log" | tail -n 1)
        if [ $rc -eq 0 ]; then
            result=PASS
        else
            result=FAIL
            failed=$((failed + 1))
        fi
        printf ':test-result: %s\n:global-test-result: %s\n' $result $result >"$dir.trs"
        echo "$result: fuzz/$t (${took}s, ${execs:-?} runs, exit $rc)"
        if [ $result = FAIL ]; then
            echo "  log: fuzz/run/$t.log; reproducer(s):" $(ls "$dir/artifacts" 2>/dev/null)
            grep -E "invariant broken|ERROR: |runtime error|SUMMARY" "$dir.log" | head -n 5 | sed "s/^/  ! /"
            tail -n 30 "$dir.log" | sed "s/^/  | /"
        fi
    done
    [ $failed -eq 0 ]
}

case ${1:-} in
build) shift; build "$@" ;;
run) shift; [ $# -ge 1 ] || die "usage: fuzz.sh run SECONDS TARGET..."; run "$@" ;;
*) die "usage: fuzz.sh build TARGET... | fuzz.sh run SECONDS TARGET..." ;;
esac
