#!/bin/bash
# bench/netpipe-curve.sh — NetPIPE's PVM module (NPpvm, Debian's netpipe-pvm, unchanged)
# on gimpi through PVM's ABI libraries (gimpirun -pvm-abi) and on PVM 3.4.6 (a private
# pvmd of its own: PVM_TMP in a scratch directory), one size curve each from 1 byte to
# 8 MiB (-p 0: no perturbations), RUNS times in alternation; prints the median throughput
# (Mbps as NetPIPE counts them: bits / (t * 2^20)) and half round-trip time per size for
# both and their ratio, and writes an SVG plot of throughput against size (python3, no
# extra package).  Both sides run on this machine, so this measures the local path.
#   bench/netpipe-curve.sh [BUILD_DIR] [RUNS] [SVG]
#   e.g. bench/netpipe-curve.sh _build 5 doc/netpipe-curve.svg
# Not a test: run it by hand on a quiet machine.
set -u
SRC=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
BUILD=$(cd "${1:-$SRC/_build}" && pwd); RUNS=${2:-5}; SVG=$(realpath -m "${3:-$SRC/doc/netpipe-curve.svg}")
NP="-p 0 -u 8388608"
command -v NPpvm >/dev/null || { echo "netpipe-curve: NPpvm missing (apt-get install netpipe-pvm)" >&2; exit 1; }
command -v pvmd >/dev/null || { echo "netpipe-curve: pvmd missing (apt-get install pvm)" >&2; exit 1; }
tmp=$(mktemp -d)
pvmd_pid=
trap '[ -n "$pvmd_pid" ] && kill -TERM "$pvmd_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# gimpi: both NPpvm in one job (the receiver first), through the ABI libraries
gimpi_run() {
    # shellcheck disable=SC2086 # options meant to split
    timeout 600 "$BUILD/programs/gimpirun" -pvm-abi -np 1 NPpvm $NP -o "$tmp/gr.out" : \
        -np 1 NPpvm -h localhost $NP -o "$1" >"$tmp/g.log" 2>&1 ||
        { echo "netpipe-curve: gimpi run failed:" >&2; tail -5 "$tmp/g.log" >&2; return 1; }
}

# PVM: a private pvmd, then the receiver, then the transmitter (it wants to see exactly
# 2 tasks: while the receiver has not enrolled yet it stops, and is started again)
export PVM_ROOT=/usr/lib/pvm3 PVM_ARCH=LINUX64 PVM_ALLOW_ROOT=1 PVM_TMP="$tmp/pvm"
mkdir -p "$PVM_TMP"
pvmd >"$PVM_TMP/stdout" 2>&1 &
pvmd_pid=$!
uid=$(id -u)
for _ in $(seq 1 400); do [ -S "$(cat "$PVM_TMP/pvmd.$uid" 2>/dev/null)" ] && break; sleep 0.025; done
[ -S "$(cat "$PVM_TMP/pvmd.$uid" 2>/dev/null)" ] || { echo "netpipe-curve: no pvmd" >&2; exit 1; }
pvm_run() {
    # shellcheck disable=SC2086
    NPpvm $NP -o "$tmp/pr.out" >"$tmp/pr.log" 2>&1 &
    local rpid=$! try
    for try in $(seq 1 50); do
        # shellcheck disable=SC2086
        timeout 600 NPpvm -h localhost $NP -o "$1" >"$tmp/p.log" 2>&1 && break
        grep -q 'n=1' "$tmp/p.log" || { echo "netpipe-curve: PVM run failed:" >&2; tail -5 "$tmp/p.log" >&2; kill "$rpid"; return 1; }
        sleep 0.1
    done
    wait "$rpid"
}

for k in $(seq "$RUNS"); do
    if [ $((k % 2)) = 1 ]; then gimpi_run "$tmp/g$k.out" && pvm_run "$tmp/p$k.out"
    else pvm_run "$tmp/p$k.out" && gimpi_run "$tmp/g$k.out"; fi || exit 1
    echo "netpipe-curve: run $k of $RUNS done" >&2
done

python3 - "$tmp" "$RUNS" "$SVG" <<'PY'
import math, statistics, sys
tmp, runs, svg = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(prefix):
    d = {}
    for k in range(1, runs + 1):
        for line in open(f"{tmp}/{prefix}{k}.out"):
            f = line.split()
            if len(f) >= 3:
                d.setdefault(int(f[0]), ([], []))
                d[int(f[0])][0].append(float(f[1]))
                d[int(f[0])][1].append(float(f[2]) * 1e6)
    return {s: (statistics.median(v[0]), statistics.median(v[1])) for s, v in d.items()}
g, p = load("g"), load("p")
sizes = sorted(set(g) & set(p))
print(f"NPpvm, median of {runs} runs each (Mbps = bits / (t * 2^20), t = half round trip)")
print(f"{'bytes':>9} {'gimpi Mbps':>11} {'PVM Mbps':>10} {'gimpi us':>10} {'PVM us':>10} {'ratio':>6}")
worse = []
for s in sizes:
    r = g[s][0] / p[s][0]
    print(f"{s:>9} {g[s][0]:>11.2f} {p[s][0]:>10.2f} {g[s][1]:>10.2f} {p[s][1]:>10.2f} {r:>6.2f}")
    if r < 1:
        worse.append(s)
print("gimpi below PVM at: " + (" ".join(map(str, worse)) if worse else "no size"))
# the plot: log2 size across, log10 throughput up
W, H, L, R, T, B = 720, 440, 70, 20, 30, 50
ymin = 10 ** math.floor(math.log10(min(min(g[s][0], p[s][0]) for s in sizes)))
ymax = 10 ** math.ceil(math.log10(max(max(g[s][0], p[s][0]) for s in sizes)))
xmax = math.log2(sizes[-1])
X = lambda s: L + (W - L - R) * math.log2(s) / xmax
Y = lambda v: T + (H - T - B) * (1 - (math.log10(v) - math.log10(ymin)) / (math.log10(ymax) - math.log10(ymin)))
o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
     f'<rect width="{W}" height="{H}" fill="white"/>',
     f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="13">NetPIPE NPpvm on one host: gimpi (-pvm-abi) vs PVM 3.4.6, median of {runs} runs</text>']
for e in range(0, int(xmax) + 1, 2):
    x = X(2 ** e)
    lab = f"{2 ** e}" if e < 10 else (f"{2 ** (e - 10)}K" if e < 20 else f"{2 ** (e - 20)}M")
    o += [f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>',
          f'<text x="{x:.1f}" y="{H - B + 14}" text-anchor="middle">{lab}</text>']
e = math.log10(ymin)
while e <= math.log10(ymax) + 1e-9:
    y = Y(10 ** e)
    o += [f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>',
          f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{10 ** e:g}</text>']
    e += 1
o += [f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="black"/>',
      f'<text x="{(L + W - R) / 2}" y="{H - 12}" text-anchor="middle">message size (bytes)</text>',
      f'<text x="16" y="{(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 16 {(T + H - B) / 2})">throughput (Mbps, log)</text>']
for name, d, col in (("gimpi", g, "#c0392b"), ("PVM 3.4.6", p, "#2471a3")):
    pts = " ".join(f"{X(s):.1f},{Y(d[s][0]):.1f}" for s in sizes)
    o.append(f'<polyline points="{pts}" fill="none" stroke="{col}" stroke-width="2"/>')
for i, (name, col) in enumerate((("gimpi", "#c0392b"), ("PVM 3.4.6", "#2471a3"))):
    y = T + 16 + 16 * i
    o += [f'<line x1="{L + 12}" y1="{y}" x2="{L + 36}" y2="{y}" stroke="{col}" stroke-width="2"/>',
          f'<text x="{L + 42}" y="{y + 4}">{name}</text>']
o.append("</svg>")
open(svg, "w").write("\n".join(o) + "\n")
print(f"plot: {svg}")
PY
