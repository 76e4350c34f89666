# t/examples_lib.sh — the harness behind t/pvm_examples_*.sh: every program of Debian's
# pvm-examples (examples.tar.gz and gexamples.tar.gz, extracted at test time, never
# committed) is run three times and the outputs compared: under a private real PVM 3.4.6
# pvmd (the reference: Debian's binary, or the source built with cc/gfortran against
# libpvm3 when Debian ships none), built unchanged with gimpicc/gimpifort and run under
# gimpirun, and Debian's binary itself under `gimpirun -pvm-abi` (gimpi's ABI libraries).
# A test sources this file, then calls ex_begin, ex_table with its table (one row a
# program; a row may name a scenario function of the test that runs several programs),
# and ex_end.  A row says how PVM's README starts the program, what it reads on stdin,
# and how its output is normalised (tids, contexts, host names, times; sorted when
# several tasks print).  Each run is bounded by timeout(1); the pvmd and the private
# groupds are stopped by the exit trap, also on failure.  Sourced by bash (tap.sh's
# counters and $tmp).
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
RUN="$top_builddir/programs/gimpirun"
GCC="$top_builddir/programs/gimpicc"
GFC="$top_builddir/programs/gimpifort"
export GIMPICC_INCDIR="$top_srcdir/include" GIMPICC_LIBDIR="$top_builddir/.libs"
EX_TAR=/usr/share/doc/pvm-examples/examples.tar.gz
EX_GTAR=/usr/share/doc/pvm-examples/gexamples.tar.gz
# the option that runs an unchanged PVM binary on gimpi's ABI libraries
EX_ABI=${EX_ABI:--pvm-abi}
# seconds every program (with its children) gets, in each of the three runs
EX_T=${EX_T:-60}
if [ ! -r "$EX_TAR" ] || [ ! -r "$EX_GTAR" ] || [ ! -r /usr/include/pvm3.h ] ||
   ! command -v pvmd >/dev/null; then
    echo "1..0 # SKIP needs Debian's pvm, pvm-dev and pvm-examples"; exit 0
fi
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/pvmd_lib.sh"
# PVM's code is K&R (-w), and bwtest.c's validation overflows int (n*n for n > 46340):
# harmless there, but a sanitizer build must not stop on PVM's own undefined behaviour
XF="-std=gnu17 -w -fno-sanitize=signed-integer-overflow"
# gfortran: PVM's Fortran passes mismatched argument types (the flags of its Makefile.aimk)
FF="-w -fallow-argument-mismatch"
SRC="$tmp/src" REF="$tmp/ref" GI="$tmp/gi" OUT="$tmp/out"
mkdir -p "$SRC" "$REF" "$GI" "$OUT"
HOST=$(hostname)

# the reference side's helper, a PVM task: `wait SECS` returns once no task is left but
# pvmgs (the pvmd logs a spawned task's output before it notifies the task's exit), `spawn
# N SECS PROG ARGS` spawns N copies together first (PVM's `spawn -N` from the console),
# `halt` halts the pvmd, `groups` starts the group server (several examples starting it
# at once make PVM print "Group Server already running?", a race of PVM's).  Tasks still
# there after SECS are killed and named on stderr.
ex_helper_src() {
    cat <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pvm3.h>
static int alive(int me, int *tids, int max)
{
    struct pvmtaskinfo *ti;
    int nt = 0, k = 0;
    if (pvm_tasks(0, &nt, &ti) < 0) return 0;
    for (int i = 0; i < nt && k < max; i++)
        if (ti[i].ti_tid > 0 && ti[i].ti_tid != me && strcmp(ti[i].ti_a_out, "pvmgs") != 0)
            tids[k++] = ti[i].ti_tid;
    return k;
}
int main(int argc, char **argv)
{
    int me = pvm_mytid(), tids[256], secs = 60, n, rc = 0;
    if (me < 0 || argc < 2) return 1;
    if (!strcmp(argv[1], "halt")) { pvm_setopt(PvmAutoErr, 0); pvm_halt(); return 0; }
    if (!strcmp(argv[1], "groups")) {           /* start pvmgs before the examples do */
        pvm_joingroup("pvmhelp");
        pvm_lvgroup("pvmhelp");
        pvm_exit();
        return 0;
    }
    if (!strcmp(argv[1], "spawn") && argc >= 5) {
        int np = atoi(argv[2]);
        secs = atoi(argv[3]);
        if (pvm_spawn(argv[4], argc > 5 ? argv + 5 : NULL, 0, "", np, tids) != np) {
            fprintf(stderr, "pvmhelp: cannot spawn %d %s\n", np, argv[4]);
            rc = 1;
        }
    } else if (argc > 2) secs = atoi(argv[2]);
    struct timeval tmo = { secs, 0 };
    while ((n = alive(me, tids, 256)) > 0) {
        pvm_notify(PvmTaskExit, 9999, n, tids);
        if (pvm_trecv(-1, 9999, &tmo) <= 0) {
            for (int i = 0; i < n; i++) {
                fprintf(stderr, "pvmhelp: t%x still running after %d s, killed\n", tids[i], secs);
                pvm_kill(tids[i]);
            }
            rc = 2;
            break;
        }
    }
    pvm_exit();
    return rc;
}
EOF
}

# ex_pvmd_stop: halts the test's pvmd (the helper asks it; TERM if it does not go), stops
# the private groupd, and keeps the outputs in $EX_KEEP if set (to look at them)
ex_pvmd_stop() {
    if [ -n "${EX_GD:-}" ]; then { kill -TERM $EX_GD; wait $EX_GD; } 2>/dev/null; EX_GD=; fi
    [ -n "${EX_KEEP:-}" ] && [ -d "$OUT" ] && mkdir -p "$EX_KEEP" && cp -r "$OUT/." "$EX_KEEP/"
    [ -n "${PVMD_PID:-}" ] || return 0
    # (the pvmd ends the helper too: its subshell, not the test, reports it)
    (timeout 10 "$REF/pvmhelp" halt; :) >/dev/null 2>&1
    for _ in $(seq 1 100); do kill -0 "$PVMD_PID" 2>/dev/null || break; sleep 0.05; done
    pvmd_stop
}

# ex_groupd KIND: starts a private groupd at ipc://$tmp/gd-KIND, ready once it prints its
# endpoint (ex_pvmd_stop ends it)
ex_groupd() {
    local ep
    mkfifo "$tmp/gd-$1.fifo"
    "$top_builddir/groupd/groupd" --foreground --endpoint "ipc://$tmp/gd-$1" \
        >"$tmp/gd-$1.fifo" 2>"$tmp/gd-$1.err" &
    EX_GD="${EX_GD:-} $!"
    exec 3<"$tmp/gd-$1.fifo"
    read -r -t 20 -u 3 ep; exec 3<&-
    [ "$ep" = "ipc://$tmp/gd-$1" ] || echo "# groupd for $1 did not start: $(head -c 200 "$tmp/gd-$1.err")"
}

# ex_begin: extracts the tarballs, builds the helper, starts a private pvmd (its own
# PVM_TMP, the reference binaries then Debian's on its PVM_PATH) with its pvmgs, and the
# private groupds; finds out whether gimpirun has -pvm-abi
ex_begin() {
    tar xzf "$EX_TAR" -C "$SRC" && tar xzf "$EX_GTAR" -C "$SRC" ||
        { echo "Bail out! cannot extract $EX_TAR, $EX_GTAR"; exit 1; }
    ex_helper_src >"$REF/pvmhelp.c"
    cc -o "$REF/pvmhelp" "$REF/pvmhelp.c" -lgpvm3 -lpvm3 ||
        { echo "Bail out! cannot build the PVM helper"; exit 1; }
    trap 'ex_pvmd_stop; tap_stop_jobs; rm -rf "$tmp"' EXIT
    pvmd_start "$REF" || EX_PVMD_BAD="the private pvmd did not start"
    EX_PVMLOG=$PVMD_LOG
    timeout 30 "$REF/pvmhelp" groups || EX_PVMD_BAD="the private pvmd does not start pvmgs"
    # gimpi: a groupd of the test's own for each kind of run (a persistent mailbox entry
    # of the gimpi build's run must not be there for the ABI run's)
    ex_groupd gi && ex_groupd abi
    # does this gimpirun run PVM binaries on the ABI libraries?
    EX_ABI_BAD= EX_ABI_SKIP=
    if ldd "$top_builddir/.libs/libgimpi.so" 2>/dev/null | grep -q libasan; then
        # Debian's binaries are not built with ASan, which must come first in a process
        EX_ABI_SKIP="a sanitizer build's libgimpi cannot be loaded by unsanitized binaries"
    elif ! GIMPI_GROUPD="ipc://$tmp/gd-abi" timeout 30 "$RUN" $EX_ABI -np 1 /bin/true \
            >"$tmp/abi.out" 2>&1; then
        EX_ABI_BAD="gimpirun $EX_ABI fails: $(head -1 "$tmp/abi.out" | cut -c1-100)"
    fi
    # PVM's examples leak by design (buffers kept until exit): a sanitizer build checks
    # libgimpi's leaks in its own tests, not theirs; and stdbuf (EX_BUF) preloads its
    # library ahead of ASan's runtime, which ASan accepts when told not to check
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:verify_asan_link_order=0"
}

# ex_end: stops the pvmd now (the trap would too), prints the plan (TAP allows it last:
# the number of lines depends on the table) and exits with the tests' verdict
ex_end() { ex_pvmd_stop; echo "1..$n"; exit $((failed > 0)); }

# ex_norm ORDER SED: the lines that matter of the output on stdin: gimpirun's own notes
# (a task's exit status) dropped; trailing blanks gone; the host name as HOST; the
# programs' directories gone, and Debian's .pvm suffix (hello.pvm, gs.pvm); SED (sed -E,
# the row's) applied; then, with ORDER seq, tids and non-zero contexts ("context N",
# "context: N", "ctx = N") renumbered in order of first appearance (T1, T2, C1...), with
# ORDER sort, collapsed (T, C) and the lines sorted (several tasks print at once)
ex_norm() {
    local order=$1 sedx=${2:-}
    grep -av '^gimpirun: ' | sed -E 's/[[:space:]]+$//' |
        sed -E "s/<$HOST>/<HOST>/g; s/ from $HOST\$/ from HOST/; s/machine $HOST\b/machine HOST/g" |
        sed -E "s#(/usr/bin|$REF|$GI)/##g; s/\b([a-z_]+)\.pvm\b/\1/g" |
        sed -E "${sedx:-s/^//}" |
        awk -v order="$order" '
        function lab(s, kind,    k) {
            if (order == "sort") return kind
            k = kind SUBSEP s
            if (!(k in seen)) seen[k] = kind (++cnt[kind])
            return seen[k]
        }
        {
            out = ""; line = $0
            while (match(line, /(0x|t)[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]+|(context:?|ctx =) +-?[1-9][0-9]*/)) {
                m = substr(line, RSTART, RLENGTH); at = RSTART; len = RLENGTH
                if (m ~ /^(context|ctx)/) {
                    match(m, /-?[1-9][0-9]*$/)
                    r = substr(m, 1, RSTART - 1) lab(substr(m, RSTART), "C")
                }
                else if (m ~ /^0x/) r = "0x" lab(substr(m, 3), "T")
                else r = "t" lab(substr(m, 2), "T")
                out = out substr(line, 1, at - 1) r
                line = substr(line, at + len)
            }
            print out line
        }' | if [ "$order" = sort ]; then LC_ALL=C sort; else cat; fi
}

# ex_pvml_since OFFSET: the output lines the pvmd logged for its tasks after byte OFFSET
ex_pvml_since() {
    tail -c +$(($1 + 1)) "$EX_PVMLOG" 2>/dev/null |
        sed -nE 's/^\[t8[0-9a-f]+\] [0-9\/]+ [0-9:]+ \[t[0-9a-f]+\] ?//p'
}

# ex_launch MODE NP PROG ARGS...: runs PROG as PVM's README does (NP 0: from the shell,
# else NP copies spawned together) in MODE pvm (the private pvmd), gi or abi (gimpirun,
# -np max(NP,1); abi adds $EX_ABI; each kind its own groupd); stdin and stdout/stderr
# are the caller's.  With EX_BUF="stdbuf -oL" the program's stdout is line-buffered (a
# scenario waits for a line).  For pvm the output of spawned tasks is in the pvmd's log
# (ex_pvml_since) once ex_pvm_wait is back.
ex_launch() {
    local mode=$1 np=$2 k; shift 2
    k=$((np > 0 ? np : 1))
    case $mode in
    pvm) if [ "$np" = 0 ]; then ${EX_BUF:-} timeout "$EX_T" "$@"
         else timeout $((EX_T + 10)) "$REF/pvmhelp" spawn "$np" "$EX_T" "$@" </dev/null; fi ;;
    gi)  GIMPI_GROUPD="ipc://$tmp/gd-gi" ${EX_BUF:-} timeout "$EX_T" "$RUN" -np $k "$@" ;;
    abi) GIMPI_GROUPD="ipc://$tmp/gd-abi" ${EX_BUF:-} timeout "$EX_T" "$RUN" $EX_ABI -np $k "$@" ;;
    esac
}
# ex_wait_line FILE REGEX: waits (at most EX_T s) until a line of FILE matches REGEX
ex_wait_line() {
    local end=$(($(date +%s) + EX_T))
    until grep -Eq -- "$2" "$1" 2>/dev/null; do
        [ "$(date +%s)" -lt $end ] || return 1
        sleep 0.05
    done
}
# ex_step MODE DIR PROG ARGS...: one program of a scenario from the shell (stdin: the
# caller's); prints a header (whether it failed: gimpirun's status is not the task's),
# its stdout, then its stderr (their order kept apart)
ex_step() {
    local mode=$1 dir=$2 prog=$3 st=ok; shift 3
    ex_launch "$mode" 0 "$dir/$prog" "$@" >"$tmp/step.out" 2>"$tmp/step.err" || st=failed
    echo "== $prog $* ($st)"; cat "$tmp/step.out"; echo "-- stderr:"; cat "$tmp/step.err"
}
# ex_pvm_wait: returns once the pvmd has no task left (bounded); names what it killed
ex_pvm_wait() { timeout $((EX_T + 10)) "$REF/pvmhelp" wait "$EX_T"; }

# ex_compare NAME WHAT: TAP line comparing $OUT/NAME.pvm.n with $OUT/NAME.WHAT.n, with
# the diff (and the raw output) as diagnostics when they differ
ex_compare() {
    local name=$1 what=$2 label
    case $what in
    gi)  label="built with gimpi" ;;
    abi) label="$EX_ABI_WHAT under gimpirun $EX_ABI" ;;
    esac
    if [ -s "$OUT/$name.pvm.n" ] && cmp -s "$OUT/$name.pvm.n" "$OUT/$name.$what.n"; then
        ok 0 "$name: $label prints what PVM prints ($(wc -l <"$OUT/$name.pvm.n") lines)"
    else
        ok 1 "$name: $label prints what PVM prints (exit $(cat "$OUT/$name.$what.rc" 2>/dev/null))"
        diff -u "$OUT/$name.pvm.n" "$OUT/$name.$what.n" | head -40 | sed 's/^/# /'
        echo "# raw output of the $what run:"; head -15 "$OUT/$name.$what.raw" | sed 's/^/#   /'
    fi
}

# ex_build KIND OUT=SRC[+SRC][:FLAG:FLAG...]...: builds each program of a row into $GI
# (KIND gi: gimpicc, gimpifort for .f) or $REF (KIND ref: cc or gfortran against PVM);
# returns non-zero, the compiler's words in $OUT/build.err, when one fails
ex_build() {
    local kind=$1 spec o s f fl rc=0; shift
    : >"$OUT/build.err"
    for spec in "$@"; do
        o=${spec%%=*} s=${spec#*=}; f=${s%%:*}; fl=
        [ "$f" != "$s" ] && fl=$(echo "${s#*:}" | tr ':' ' ')
        f=$(echo "$f" | sed "s|+| $SRC/|g; s|^|$SRC/|")
        case $kind:$f in
        gi:*.f)  if [ -x "$GFC" ]; then "$GFC" $FF $fl -o "$GI/$o" $f
                 else echo "no gimpifort ($GFC)"; false; fi ;;
        gi:*)    "$GCC" $XF $fl -o "$GI/$o" $f ;;
        ref:*.f) gfortran $FF $fl -I/usr/include -o "$REF/$o" $f -lfpvm3 -lgpvm3 -lpvm3 ;;
        ref:*)   cc -std=gnu17 -w $fl -o "$REF/$o" $f -lgpvm3 -lpvm3 ;;
        esac >>"$OUT/build.err" 2>&1 || rc=1
    done
    return $rc
}

# ex_run NAME MODE NP DIR PROG ARGS: one run of a row (or, PROG @FUNC, a scenario function
# called as FUNC MODE DIR) with the row's stdin ($EX_IN); raw output in $OUT/NAME.MODE.raw,
# exit status in .rc, normalised in .n (ORDER and SED of the row: $EX_ORDER, $EX_SED)
ex_run() {
    local name=$1 mode=$2 np=$3 dir=$4 prog=$5 off=0 rc; shift 5
    local raw="$OUT/$name.$mode.raw"
    [ "$mode" = pvm ] && off=$(stat -c %s "$EX_PVMLOG" 2>/dev/null || echo 0)
    case $prog in
    @*) ${prog#@} "$mode" "$dir" >"$raw" 2>&1 ;;
    *)  printf '%b' "$EX_IN" | ex_launch "$mode" "$np" "$dir/$prog" "$@" >"$raw" 2>&1 ;;
    esac
    rc=$?
    if [ "$mode" = pvm ]; then
        ex_pvm_wait >>"$raw" 2>&1
        ex_pvml_since "$off" >>"$raw"
    fi
    echo "$rc" >"$OUT/$name.$mode.rc"
    ex_norm "$EX_ORDER" "$EX_SED" <"$raw" >"$OUT/$name.$mode.n"
}

# ex_prog "NAME | BUILD | DEBIAN | NP | ARGS | STDIN | ORDER | SED [| NOTE]": one row of a
# table (columns as in t/pvm_examples_c.sh; NOTE: a regex of a sanitizer's report that
# turns the gimpi comparison into a SKIP, PVM's own bug), four TAP lines: PVM's output
# captured, the sources build unchanged with gimpi, the gimpi build prints the same,
# Debian's binary (else the PVM build) under gimpirun -pvm-abi prints the same.
ex_prog() {
    local name build deb np args refdir prog note
    IFS='|' read -r name build deb np args EX_IN EX_ORDER EX_SED note <<<"$1"
    note=$(echo $note)
    name=$(echo $name) deb=$(echo $deb) np=$(echo $np) EX_ORDER=$(echo $EX_ORDER)
    EX_IN=$(echo $EX_IN) EX_SED=$(echo "$EX_SED" | sed -E 's/^ +| +$//g')
    # a SED that is a variable's name (capitals) stands for that variable's value
    case $EX_SED in [A-Z]*) EX_SED=${!EX_SED} ;; esac
    set -f; args=($args); set +f
    local nofort=
    case $build in *.f*) command -v gfortran >/dev/null || nofort=yes ;; esac
    # the reference: Debian's binary, else the source built against PVM 3.4.6
    refdir=/usr/bin prog=$deb EX_ABI_WHAT="Debian's binary"
    case $deb in -*)
        EX_ABI_WHAT="the PVM build"
        refdir=$REF prog=${deb#-}; prog=${prog:-$name}
        ex_build ref $build || { sed 's/^/# /' "$OUT/build.err" | head -5; } ;;
    esac
    case $np in @*) prog=$np np=0 ;; esac
    if [ -n "${EX_PVMD_BAD:-}" ]; then ok 1 "$name: $EX_PVMD_BAD"; else
        ex_run "$name" pvm "$np" "$refdir" "$prog" "${args[@]}"
        [ -s "$OUT/$name.pvm.n" ] && ! grep -q "^pvmhelp: " "$OUT/$name.pvm.raw"
        ok $? "$name: PVM 3.4.6 output captured ($(wc -l <"$OUT/$name.pvm.n") lines, exit $(cat "$OUT/$name.pvm.rc"))" ||
            sed 's/^/# /' "$OUT/$name.pvm.raw" | head -20
    fi
    local gprog=${build%%=*}; gprog=$(echo $gprog)
    case $prog in @*) gprog=$prog ;; esac
    set -f
    if [ -n "$nofort" ]; then
        skip "$name: gfortran is not installed (gimpifort needs it)"; skip "$name: not built"
    elif ex_build gi $build; then
        ok 0 "$name: $(echo $build | sed -E 's/[a-z_0-9]+=//g; s/:[^ ]*//g') build unchanged with gimpi"
        ex_run "$name" gi "$np" "$GI" "$gprog" "${args[@]}"
        if [ -n "$note" ] && grep -Eq "$note" "$OUT/$name.gi.raw"; then
            skip "$name: a sanitizer build stops PVM's own bug ($(grep -Eo "$note" "$OUT/$name.gi.raw" | head -1))"
        else ex_compare "$name" gi; fi
    else
        ok 1 "$name: builds unchanged with gimpi"; sed 's/^/# /' "$OUT/build.err" | head -10
        skip "$name: not built with gimpi"
    fi
    set +f
    if [ -n "$EX_ABI_SKIP" ]; then skip "$name: $EX_ABI_SKIP"
    elif [ -n "$EX_ABI_BAD" ]; then ok 1 "$name: Debian's binary under gimpi: $EX_ABI_BAD"; else
        ex_run "$name" abi "$np" "$refdir" "$prog" "${args[@]}"
        ex_compare "$name" abi
    fi
}

# ex_table: runs ex_prog on every row read from stdin (blank and # lines skipped)
ex_table() {
    local rows=() r
    while IFS= read -r r; do
        case $r in ''|'#'*) continue ;; esac
        rows+=("$r")
    done
    for r in "${rows[@]}"; do ex_prog "$r"; done
}
