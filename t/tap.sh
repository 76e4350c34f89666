# t/tap.sh — what every shell test sources: a TAP `ok STATUS DESCRIPTION` counter, a
# scratch directory $tmp, and an exit trap that stops the test's background jobs with TERM
# (timeout(1) passes TERM on to the program it runs, KILL would orphan it), waits for
# them and removes $tmp.  A test may install its own trap afterwards.  End with
# `exit $((failed > 0))`.
n=0 failed=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; failed=$((failed + 1)); fi; }
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait; rm -rf "$tmp"' EXIT
