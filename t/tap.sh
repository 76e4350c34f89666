# t/tap.sh — what every shell test sources: a TAP `ok STATUS DESCRIPTION` counter, a
# scratch directory $tmp, and an exit trap that stops the test's background jobs with TERM
# (timeout(1) passes TERM on to the program it runs, KILL would orphan it), waits for
# them at most 30 s, then KILLs what is left, its children first (a sanitizer build's
# exit-time leak check can hang for good), and removes $tmp.  A test may install its own
# trap afterwards.  End with `exit $((failed > 0))`.  A test that keeps the output of
# the program it checks in the file $out may ask it with has, count and okd.
n=0 failed=0
# (returns 1 for "not ok", so that `ok $? "..." || show-why` shows why)
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); return 1; fi; }
# has TEXT: the output ($out) has a line with TEXT (fixed string)
has() { grep -qF -- "$1" "$out"; }
# count TEXT: how many lines of the output have TEXT
count() { grep -cF -- "$1" "$out"; }
# diag_out: the output as TAP diagnostics
diag_out() { sed 's/^/# /' "$out"; }
# okd STATUS TEXT: ok, and the output as diagnostics when it failed
okd() { ok "$1" "$2"; [ "$1" = 0 ] || diag_out; }
# check STATUS DESCRIPTION FILE...: ok, and on failure the files' first 20 lines as TAP
# comments
check() { local st=$1 desc=$2; shift 2; ok "$st" "$desc"; [ "$st" = 0 ] || sed 's/^/# /' "$@" | head -20; }
# skip REASON: the next test, skipped for REASON
skip() { n=$((n + 1)); echo "ok $n # SKIP $*"; }
tmp=$(mktemp -d)
# every process this test starts inherits TAP_TAG, so that `tap_mine PATTERN` counts this
# test's processes only (other tests, and other builds' tests, may run the same programs)
export TAP_TAG="$tmp"
tap_mine() {
    local p k=0
    for p in $(pgrep -f "$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxF "TAP_TAG=$tmp" && k=$((k + 1))
    done
    echo $k
}
# tap_gone PATTERN [SECONDS]: waits until no process of this test matches PATTERN (ended
# processes are reaped by init, on no schedule of ours), at most SECONDS (default 30);
# prints how many are left
tap_gone() {
    local left end=$(($(date +%s) + ${2:-30}))
    while left=$(tap_mine "$1"); [ "$left" != 0 ] && [ "$(date +%s)" -lt $end ]; do
        sleep 0.05
    done
    echo "$left"
}
# stops the background jobs: TERM, at most 30 s to go, then KILL (children first)
tap_stop_jobs() {
    local pids p alive
    pids=$(jobs -p)
    [ -n "$pids" ] || return 0
    kill $pids 2>/dev/null
    for _ in $(seq 1 300); do
        alive=no
        for p in $pids; do kill -0 "$p" 2>/dev/null && alive=yes; done
        [ $alive = no ] && break
        sleep 0.1
    done
    for p in $pids; do pkill -KILL -P "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
    wait
}
trap 'tap_stop_jobs; [ -n "${TAP_KEEP_TMP:-}" ] && cp -r "$tmp" "$TAP_KEEP_TMP"; rm -rf "$tmp"' EXIT
