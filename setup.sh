#!/bin/bash
# setup.sh — the one entry point of a fresh checkout: installs what the build needs (Debian
# packages, only the missing ones), generates ./configure, configures and builds out of
# tree in _build/, then runs the demo or the test suite.  Safe to run again: each step is
# skipped when its result is already there and up to date.
#
#   ./setup.sh demo    set up, build, run examples/demo.sh (IMPI startup, PVM examples)
#   ./setup.sh check   set up (and pvm-examples, for t/pvm_examples.sh), build, run
#                      `make check`
#   ./setup.sh build   set up and build only
#   ./setup.sh fuzz    also install clang, build the libFuzzer targets, run each for
#                      $FUZZ_SECONDS seconds (default 20)
#   ./setup.sh deps    install the missing packages only
#
# Environment: GIMPI_BUILDDIR (default _build), GIMPI_CONFIGURE_FLAGS (e.g.
# --enable-sanitizers; a change reconfigures), MAKEFLAGS as usual.
set -eu -o pipefail
# shellcheck disable=SC2086 # package lists are meant to split

cd "$(dirname "$0")"
SRCDIR=$(pwd)
BUILDDIR=${GIMPI_BUILDDIR:-_build}
CONFIGURE_FLAGS=${GIMPI_CONFIGURE_FLAGS:-}
JOBS=$(nproc 2>/dev/null || echo 2)
PACKAGES="build-essential autoconf automake libtool pkg-config libzmq3-dev libsodium-dev libedit-dev iproute2"
FUZZ_PACKAGES="clang libclang-rt-dev"
# PVM's own example programs, which the test suite builds with gimpicc (t/pvm_examples.sh)
# and runs unchanged (t/pvm_abi_run.sh, with NetPIPE's NPpvm), and gfortran for the
# Fortran binding's tests (t/fortran*.sh; they skip without it), python3 for the trace
# checker (t/trace_json_check.py)
CHECK_PACKAGES="pvm pvm-dev pvm-examples netpipe-pvm gfortran python3"
# headless Chromium, in which t/trace_html.sh opens gimpi-trace's page (it skips without)
CHECK_PACKAGES="$CHECK_PACKAGES chromium"

# Prints a step on stderr.
say() { echo "setup: $*" >&2; }
# Prints an error on stderr and stops.
die() { echo "setup: error: $*" >&2; exit 1; }

# Prints the packages of "$@" that dpkg does not list as installed.
missing_packages() {
    local p
    for p in "$@"; do
        [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] || echo "$p"
    done
}

# Installs the missing packages of "$@" with apt-get (as root, or through sudo).
install_deps() {
    if ! command -v dpkg-query >/dev/null || ! command -v apt-get >/dev/null; then
        say "not a Debian-like system: make sure these are installed: $*"
        return 0
    fi
    local missing
    missing=$(missing_packages "$@" | tr '\n' ' ')
    if [ -z "${missing// /}" ]; then
        return 0
    fi
    local sudo=
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || die "missing packages ($missing) and not root: install them, or run as root"
        sudo="sudo"
    fi
    say "installing missing packages: $missing"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q
    # shellcheck disable=SC2086 # the list is meant to split
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
}

# Generates ./configure and build-aux/ when they are missing or older than configure.ac.
autogen() {
    [ ! -f config.status ] ||
        die "the source tree is configured in place (./config.status): run 'make distclean' in $SRCDIR first"
    if [ ! -x configure ] || [ ! -f build-aux/tap-driver.sh ] || [ configure.ac -nt configure ]; then
        say "./autogen.sh"
        local log
        log=$(mktemp)
        ./autogen.sh >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; die "./autogen.sh failed"; }
        rm -f "$log"
    fi
    # the commit-message rule of CONTRIBUTING.md, in a git checkout that has no hooks path yet
    if [ -e .git ] && [ -z "$(git config core.hooksPath 2>/dev/null)" ]; then
        git config core.hooksPath .githooks 2>/dev/null || true
    fi
}

# Configures $BUILDDIR when it never was, when ./configure changed or the flags did.
configure() {
    mkdir -p "$BUILDDIR"
    local stamp="$BUILDDIR/.setup-configure-flags"
    if [ ! -f "$BUILDDIR/config.status" ] || [ ! -f "$BUILDDIR/Makefile" ] ||
       [ configure -nt "$BUILDDIR/config.status" ] ||
       [ "$(cat "$stamp" 2>/dev/null)" != "$CONFIGURE_FLAGS" ]; then
        say "configure $CONFIGURE_FLAGS (in $BUILDDIR/)"
        # shellcheck disable=SC2086
        (cd "$BUILDDIR" && "$SRCDIR/configure" -q $CONFIGURE_FLAGS)
        printf '%s' "$CONFIGURE_FLAGS" >"$stamp"
    fi
}

# Builds everything `make` builds.
build() {
    say "make (in $BUILDDIR/)"
    make -C "$BUILDDIR" -j"$JOBS" -s
}

# Prints the end of the log of every test that failed in $BUILDDIR.
show_failures() {
    local trs
    find "$BUILDDIR" -name '*.trs' -not -path '*/fuzz/run/*' |
    while IFS= read -r trs; do
        grep -q -E '^:test-result: (FAIL|XPASS|ERROR)' "$trs" || continue
        echo "---- ${trs%.trs}.log (last 40 lines) ----" >&2
        tail -n 40 "${trs%.trs}.log" >&2
    done || true
}

# Runs the test suite; on failure shows the failing logs.
check() {
    say "make check (in $BUILDDIR/)"
    if ! make -C "$BUILDDIR" -j"$JOBS" check; then
        show_failures
        die "make check failed (logs: $BUILDDIR/t/*.log)"
    fi
}

cmd=${1:-}
case $cmd in
deps) install_deps $PACKAGES ;;
build) install_deps $PACKAGES; autogen; configure; build ;;
check) install_deps $PACKAGES $CHECK_PACKAGES; autogen; configure; build; check ;;
demo)
    install_deps $PACKAGES; autogen; configure; build
    say "examples/demo.sh $BUILDDIR"
    exec "$SRCDIR/examples/demo.sh" "$(cd "$BUILDDIR" && pwd)"
    ;;
fuzz)
    install_deps $PACKAGES $FUZZ_PACKAGES
    # configure found no clang before it was installed: look again
    if [ -f "$BUILDDIR/Makefile" ] && ! grep -q '^FUZZ_CC = .\+' "$BUILDDIR/Makefile"; then
        rm -f "$BUILDDIR/.setup-configure-flags"
    fi
    autogen; configure; build
    make -C "$BUILDDIR" -s fuzz-run FUZZ_SECONDS="${FUZZ_SECONDS:-20}"
    ;;
*)
    sed -n '2,/^set -eu/p' "$0" | sed -e '/^set -eu/d' -e 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
