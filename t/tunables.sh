#!/bin/bash
# t/tunables.sh — the one table of environment variables (libgimpi/base/gimpi_tunables.c)
# against the sources and the programs.  It reads the sources of libgimpi/, server/,
# programs/, groupd/, bench/ and examples/, with the macros that name a variable
# (#define GIMPI_ENV_X "GIMPI_X", PROCTREE_ENV) put back as their strings, and takes as a
# read of a variable its name as the first argument of a call (getenv, gimpi_env, or a
# helper such as s_env_ms("GIMPI_X", 60)) or the second of gimpi_env_entry; setenv and
# unsetenv set, they do not read.  It checks: (1) no getenv of a variable of gimpi is left
# outside the table's file (gimpi_env instead); (2) every variable read is in the table;
# (3) every row is read somewhere; (4) the files a row names read it; (5) doc/tunables.md
# is what `gimpi-stat --tunables-md` prints; (6-9) `gimpi-stat --config` shows a set
# variable with its value from the environment, an unset one with its default, an
# unknown GIMPI_ one as unknown, and reads a running process's environment with --pid.
set -u
top_srcdir=${top_srcdir:-.}
top_builddir=${top_builddir:-.}
. "$top_srcdir/t/tap.sh"
S=$top_srcdir
STAT=$top_builddir/programs/gimpi-stat
TABLE=libgimpi/base/gimpi_tunables.c
echo "1..9"

# the sources, the macros that name variables, and the sources with them put back
files=$(cd "$S" && find libgimpi server programs groupd bench examples -name '*.[ch]' \
        2>/dev/null | LC_ALL=C sort)
(cd "$S" && grep -hE '^#define +(GIMPI_ENV_[A-Z0-9_]+|PROCTREE_ENV) +"[A-Z0-9_]+"' $files) |
    awk '{ printf "s/\\<%s\\>/%s/g\n", $2, $3 }' >"$tmp/macros.sed"
mkdir -p "$tmp/src"
for f in $files; do
    [ "${f%.[ch]}" = "${TABLE%.c}" ] && continue        # the table's own files
    mkdir -p "$tmp/src/$(dirname "$f")"
    sed -f "$tmp/macros.sed" "$S/$f" >"$tmp/src/$f"
done

# reads: "FILE NAME" for each variable a file reads
ours='(GIMPI_|IMPI_AUTH_|GD_BENCH_|PVM_|PVMTMASK)[A-Z0-9_]*'
(cd "$tmp/src" && for f in $files; do
    [ -f "$f" ] || continue
    grep -oE "\\<[A-Za-z_][A-Za-z0-9_]*\\( *\"$ours\"|\\<gimpi_env_entry\\([^,()]*, *\"[A-Z0-9_]+\"" "$f" |
        grep -vE '^(setenv|unsetenv|putenv)\(' | sed -E 's/.*"([A-Z0-9_]+)"$/\1/' |
        LC_ALL=C sort -u | sed "s|^|$f |"
done) >"$tmp/reads"

# the table, from the generator: "NAME READER READER ..."
md=$("$STAT" --tunables-md 2>"$tmp/md.err")
rc=$?
printf '%s\n' "$md" | sed -n 's/^| `\([A-Z][A-Z0-9_]*\)` |.* | \(`[^|]*`\) |$/\1 \2/p' |
    tr -d '`,' >"$tmp/table"
if [ $rc != 0 ] || [ ! -s "$tmp/table" ]; then
    echo "Bail out! $STAT --tunables-md printed no table (build first): $(cat "$tmp/md.err")"
    exit 1
fi
cut -d' ' -f1 "$tmp/table" | LC_ALL=C sort >"$tmp/names"

# --- 1. no getenv of gimpi's variables outside the table's file ---------------------
# A getenv that stays: a literal name that is not gimpi's (PATH, HOME, XDG_RUNTIME_DIR),
# and the host set's lookup callback, which reads Slurm's variables (SLURM_*).
srcs=$(printf '%s\n' $files | grep -vxF -e "$TABLE" -e "${TABLE%.c}.h")
(cd "$tmp/src" && grep -onE '\<getenv *\([^)]*\)' $srcs) |
    grep -vE '^libgimpi/base/gimpi_hostset_slurm\.c:[0-9]+:getenv\(name\)$' |
    while IFS= read -r l; do
        call=${l#*:*:}
        name=$(printf '%s\n' "$call" | sed -nE 's/^getenv *\( *"([A-Za-z0-9_]+)" *\)$/\1/p')
        if [ -n "$name" ] && ! printf '%s\n' "$name" | grep -qE "^$ours\$" &&
           ! grep -qxF "$name" "$tmp/names"; then
            continue
        fi
        printf '%s\n' "$l"
    done >"$tmp/getenv"
[ ! -s "$tmp/getenv" ]
ok $? "no getenv of gimpi's variables outside $TABLE: gimpi_env ($(wc -l <"$tmp/getenv") left)"
sed 's/^/# /' "$tmp/getenv"

# --- 2. every variable read is in the table -----------------------------------------
cut -d' ' -f2 "$tmp/reads" | LC_ALL=C sort -u | LC_ALL=C comm -23 - "$tmp/names" >"$tmp/unlisted"
[ ! -s "$tmp/unlisted" ]
ok $? "every variable read is in the table ($(cut -d' ' -f2 "$tmp/reads" | sort -u | wc -l) read)"
while read -r v; do
    echo "# $v: read in $(awk -v v="$v" '$2 == v { printf "%s ", $1 }' "$tmp/reads")but not in $TABLE"
done <"$tmp/unlisted"

# --- 3. every row is read somewhere -------------------------------------------------
cut -d' ' -f2 "$tmp/reads" | LC_ALL=C sort -u | LC_ALL=C comm -13 - "$tmp/names" >"$tmp/unread"
[ ! -s "$tmp/unread" ]
ok $? "every row of the table is read somewhere ($(wc -l <"$tmp/names") rows)"
sed 's/$/: in the table, read nowhere/; s/^/# /' "$tmp/unread"

# --- 4. the files a row names read it -----------------------------------------------
while read -r name readers; do
    for r in $readers; do
        case $r in
        */) awk -v v="$name" -v d="$r" '$2 == v && index($1, d) == 1 { f = 1 } END { exit !f }' \
                "$tmp/reads" || echo "$name: no file under $r reads it" ;;
        *) grep -qxF "$r $name" "$tmp/reads" || echo "$name: $r does not read it" ;;
        esac
    done
done <"$tmp/table" >"$tmp/wrong"
[ ! -s "$tmp/wrong" ]
ok $? "every file a row names reads that variable"
sed 's/^/# /' "$tmp/wrong"

# --- 5. doc/tunables.md is the generator's ------------------------------------------
printf '%s\n' "$md" >"$tmp/tunables.md"
diff -u "$S/doc/tunables.md" "$tmp/tunables.md" >"$tmp/md.diff"
ok $? "doc/tunables.md is what gimpi-stat --tunables-md prints (make update-tunables-md)"
head -20 "$tmp/md.diff" | sed 's/^/# /'

# --- 6-9. gimpi-stat --config -------------------------------------------------------
out=$(env -u GIMPI_SPIN_US GIMPI_LINK_TIMEOUT=17 GIMPI_NO_SUCH_THING=1 "$STAT" --config 2>&1)
printf '%s\n' "$out" | grep -qE '^GIMPI_LINK_TIMEOUT +environment +17 s$'
ok $? "--config: a set variable comes from the environment, with its value"
printf '%s\n' "$out" | grep -qE '^GIMPI_SPIN_US +default +500 us$'
ok $? "--config: an unset variable shows its default"
printf '%s\n' "$out" | grep -qE '^GIMPI_NO_SUCH_THING +unknown +1$' &&
    [ "$(printf '%s\n' "$out" | grep -c .)" -ge "$(wc -l <"$tmp/names")" ]
ok $? "--config: every row, and a GIMPI_ variable out of the table as unknown"
mkfifo "$tmp/ready"
GIMPI_COLL_WIN=3 sh -c 'echo $$ >"$1"; exec sleep 60' sh "$tmp/ready" &
pid=$(timeout 10 cat "$tmp/ready")
out=$(GIMPI_COLL_WIN=5 "$STAT" --config --pid "$pid" 2>&1)
kill "$pid" 2>/dev/null
printf '%s\n' "$out" | grep -qE '^GIMPI_COLL_WIN +environment +3$'
ok $? "--config --pid: what a running process was started with"
exit $((failed > 0))
