#!/bin/bash
# bench/pvm-bwtest.sh — PVM's own bwtest.c ping-pong (Debian's pvm-examples, extracted to a
# scratch directory, never into the tree) on gimpi and, when PVM 3.4 and the comparison
# harness's PVM set-up (bench/README.md; its directory in $SHARED, with pvm/pvmenv.sh and
# lib.sh) are there, on real PVM, interleaved; prints the median round-trip time (µs) per
# message size and variant.  Variants: dbwtest (pack PvmDataDefault), rbwtest (PvmDataRaw),
# ibwtest (PvmDataInPlace), pbwtest (psend/precv).  Built unchanged with gimpicc (group
# calls from libgimpi, groupd started by gimpirun) and with gcc -lgpvm3 -lpvm3 for PVM.
#   bench/pvm-bwtest.sh [BUILD_DIR] [RUNS] [SAMPLE] [gimpirun options...]
#   e.g. bench/pvm-bwtest.sh _build 3 200 -datalen 262144
set -u
SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=$(cd "${1:-$SRC/_build}" && pwd); RUNS=${2:-3}; SAMPLE=${3:-200}; shift $(($# < 3 ? $# : 3))
SHARED=${SHARED:-}    # the harness directory; without it, gimpi alone
TAR=/usr/share/doc/pvm-examples/examples.tar.gz
[ -r "$TAR" ] || { echo "pvm-bwtest: $TAR missing (apt-get install pvm-examples)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar xzf "$TAR" -C "$tmp"
export GIMPICC_INCDIR="$SRC/include" GIMPICC_LIBDIR="$BUILD/.libs"
mkdir -p "$tmp/g" "$tmp/p"
variants="d:-DPACK -DENCODE=PvmDataDefault|r:-DPACK -DENCODE=PvmDataRaw|i:-DPACK -DENCODE=PvmDataInPlace|p:"
IFS='|'; for v in $variants; do
    IFS=' '; n=${v%%:*}; f=${v#*:}
    "$BUILD/programs/gimpicc" -std=gnu17 -w -O2 -DSAMPLE="$SAMPLE" $f -o "$tmp/g/${n}bwtest" \
        "$tmp/examples/bwtest.c" || exit 1
    havepvm=0
    if [ -r /usr/include/pvm3.h ] && [ -r "$SHARED/pvm/pvmenv.sh" ] &&
       gcc -w -O2 -DSAMPLE="$SAMPLE" $f -o "$tmp/p/${n}bwtest" "$tmp/examples/bwtest.c" -lgpvm3 -lpvm3; then
        havepvm=1
    fi
    IFS='|'
done; IFS=' '
if [ $havepvm = 1 ]; then
    export BENCH_OUT=${BENCH_OUT:-/tmp/gb}
    . "$SHARED/lib.sh"; bench_build pvm >/dev/null 2>&1 && cp "$BENCH_OUT/pvm/bin/pvmrun" "$tmp/p/" || havepvm=0
fi
if [ $havepvm = 1 ]; then
    export PVM_BIN=$tmp/p; unset PVM_TMP
    . "$SHARED/pvm/pvmenv.sh"
    trap 'pvm_down; rm -rf "$tmp"' EXIT
    pvm_up >/dev/null || havepvm=0
fi
for k in $(seq "$RUNS"); do for n in d r i p; do
    if [ $havepvm = 1 ]; then
        echo "=== PVM ${n}bwtest"; (cd "$tmp/p" && timeout 300 ./pvmrun -n 2 ${n}bwtest 2>&1 | grep Roundtrip)
    fi
    echo "=== gimpi ${n}bwtest"; timeout 300 "$BUILD/programs/gimpirun" "$@" -np 2 "$tmp/g/${n}bwtest" 2>&1 | grep Roundtrip
done; done >"$tmp/out"
python3 - "$tmp/out" <<'PY'
import re, sys, statistics, collections
d = collections.defaultdict(list); cur = None
for l in open(sys.argv[1]):
    m = re.match(r'=== (\w+) (\w)bwtest', l)
    if m: cur = m.groups(); continue
    m = re.search(r'Roundtrip T = (\d+) \(us\).*Data size: (\d+)', l)
    if m and cur: d[cur + (int(m.group(2)),)].append(int(m.group(1)))
sizes = sorted({k[2] for k in d})
print("    size (bytes)     " + "".join(f"{s:>7}" for s in sizes))
for v in "drip":
    for s in ("PVM", "gimpi"):
        if any((s, v, z) in d for z in sizes):
            print(f"    {v + 'bwtest' if s == 'PVM' or ('PVM', v, sizes[0]) not in d else '':8} {s:6}  "
                  + "".join(f"{statistics.median(d[(s, v, z)]) if d[(s, v, z)] else -1:>7}" for z in sizes))
PY
