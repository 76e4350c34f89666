#!/bin/bash
# bench/pvm-mbox.sh [REPS] — the `mbox` figure (pvm_putinfo + pvm_recvinfo pairs a second,
# bench/mbox_loop.h) on gimpi and on real PVM 3.4.6, in alternation, REPS runs each (5).
# gimpi: `gimpi-pvm-bench mbox 1` of this build, on a groupd of this build (started on
# first use at a private endpoint).
# PVM: a driver around the same loop built with -lpvm3, under a private pvmd (its own
# PVM_TMP), started once.  Prints every line, then the medians and the ratio.
# Run from the build directory: bash ../bench/pvm-mbox.sh.
set -u
REPS=${1:-5}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=${GIMPI_PVM_BENCH:-bench/gimpi-pvm-bench}
[ -x "$BENCH" ] || { echo "pvm-mbox.sh: no $BENCH (run from the build directory)" >&2; exit 2; }
command -v pvmd >/dev/null && [ -r /usr/include/pvm3.h ] ||
    { echo "pvm-mbox.sh: needs pvm and pvm-dev" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'kill -TERM "$pvmd_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/drv.c" <<'C'
/* the mbox figure's loop on real PVM */
#include <stdio.h>
#include "mbox_loop.h"
int main(void)
{
    enum { W = 1000, I = 20000 };
    char name[64];
    if (pvm_mytid() < 0)
        return 1;
    snprintf(name, sizeof name, "pvm-mbox-bench-%d", pvm_mytid());
    double us = 0;
    int bad = 0, rc = mbox_pairs(name, W, I, &us, &bad);
    if (rc < 0)
        return fprintf(stderr, "mbox pair: %d\n", rc), 1;
    printf("pvm mbox n=1 pairs_per_s=%.0f us_per_pair=%.2f iters=%d warm=%d check=%s\n",
           I / (us / 1e6), us / I, I, W, bad ? "BAD" : "ok");
    pvm_exit();
    return 0;
}
C
cc -std=gnu17 -O2 -w -I/usr/include -include /usr/include/pvm3.h -I"$here" -o "$tmp/drv" \
    "$tmp/drv.c" -lpvm3 || exit 1
# gimpi's side on a groupd of this build at a private endpoint (a groupd of another
# build may serve the per-user default one)
export GIMPI_GROUPD="ipc://$tmp/gd" GIMPI_GROUPD_BIN=${GIMPI_GROUPD_BIN:-$PWD/groupd/groupd}
export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP="$tmp/pvm"
mkdir -p "$PVM_TMP"
pvmd >"$PVM_TMP/stdout" 2>&1 &
pvmd_pid=$!
for _ in $(seq 1 400); do [ -S "$(cat "$PVM_TMP/pvmd.$(id -u)" 2>/dev/null)" ] && break; sleep 0.025; done
for _ in $(seq 1 "$REPS"); do
    timeout 120 "$BENCH" mbox 1 | tee -a "$tmp/g"
    timeout 120 "$tmp/drv" | tee -a "$tmp/p"
done
med() { sed -n 's/.* pairs_per_s=\([0-9.]*\).*/\1/p' "$1" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
g=$(med "$tmp/g") p=$(med "$tmp/p")
echo "median pairs_per_s: gimpi $g, PVM $p, gimpi/PVM $(awk -v g="$g" -v p="$p" 'BEGIN {printf "%.1f", p ? g / p : 0}')"
