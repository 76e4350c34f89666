# t/pvmd_lib.sh — a private real PVM 3.4.6 pvmd for the tests that compare gimpi with PVM:
# its own PVM_TMP under the test's $tmp (so it never meets a user's or another test's
# virtual machine), programs found first in the directories given, then Debian's.
# Sourced after t/tap.sh; needs $tmp.  pvmd_start DIR... ; pvmd_up ; pvmd_stop.

# pvmd_start DIR...: exports PVM's environment (PVM_PATH = the DIRs, then PVM's library
# directory and /usr/bin), starts a pvmd and returns 0 once its address file names its
# socket (bounded: 10 s), 1 if it never does.  PVMD_PID and PVMD_LOG are set.
pvmd_start() {
    local path="" d
    for d in "$@"; do path="$path$d:"; done
    export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP="$tmp/pvm"
    export PVM_PATH="${path}/usr/lib/pvm3/lib:/usr/bin"
    mkdir -p "$PVM_TMP"
    PVMD_LOG="$PVM_TMP/pvml.$(id -u)"
    pvmd >"$PVM_TMP/stdout" 2>&1 &
    PVMD_PID=$!
    for _ in $(seq 1 400); do pvmd_up && return 0; sleep 0.025; done
    return 1
}

# pvmd_up: the private pvmd's address file names its socket
pvmd_up() { [ -S "$(cat "$PVM_TMP/pvmd.$(id -u)" 2>/dev/null)" ]; }

# pvmd_stop: stops the private pvmd (TERM) and waits for it
pvmd_stop() {
    [ -n "${PVMD_PID:-}" ] || return 0
    { kill -TERM "$PVMD_PID"; wait "$PVMD_PID"; } 2>/dev/null
    PVMD_PID=
}
