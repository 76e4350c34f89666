#!/bin/bash
# t/pvm_abi.sh — the PVM ABI gimpi promises to existing PVM binaries, checked against
# Debian's PVM 3.4.6 (packages pvm-dev, libpvm3, pvm-examples; skipped without them):
# every constant of PVM's pvm3.h has PVM's value in ours (both headers compiled into
# small programs that print them); struct pvmhostinfo, pvmtaskinfo, pvmminfo and
# pvmmboxinfo have PVM's size and field offsets; every pvm_*/Pvm* function and variable
# PVM's pvm3.h declares, and every libpvm name a Debian PVM binary references (nm -u),
# is defined by libgimpi.so or the ABI libraries; the ABI libraries carry PVM's sonames
# and need libgimpi.so.0; pvm_errlist and pvm_nerr have PVM's sizes and texts (and
# gimpi_strerror's); every ELF of pvm-examples that needs libpvm3 and NPpvm load through
# the ABI libraries with LD_BIND_NOW=1 and no undefined symbol; make install puts the
# three in $(libdir)/gimpi/pvm3 under a DESTDIR.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
PVMH=/usr/include/pvm3.h
DLIB=/usr/lib/x86_64-linux-gnu
ABI="$top_builddir/.libs/gimpi/pvm3"
if [ ! -r "$PVMH" ] || [ ! -r "$DLIB/libpvm3.so.3" ] || ! command -v dpkg >/dev/null; then
    echo "1..0 # SKIP PVM's pvm3.h or libpvm3.so.3 missing (packages pvm-dev, libpvm3)"; exit 0
fi
if [ ! -r "$ABI/libpvm3.so.3" ]; then echo "1..0 # SKIP no ABI libraries built ($ABI)"; exit 0; fi
. "${top_srcdir}/t/tap.sh"
echo "1..10"
CCG=${CC:-cc}
# the compiler gimpi was built with, and its sanitizer flags if any (from gimpicc -show)
read -r CCG flags < <("$top_builddir/programs/gimpicc" -show -c x.c)
san=$(printf '%s\n' $flags | grep -- '^-fsanitize' | tr '\n' ' ')

# --- constants ---------------------------------------------------------------------
# every object-like #define of PVM's pvm3.h with a value (the header guard and PVM's
# prototype macro have none); PVMTMPNAMLEN is defined three ways under #if, once here
names=$(grep -E '^[[:space:]]*#[[:space:]]*define[[:space:]]+[A-Za-z][A-Za-z0-9_]*[[:space:]]+[^[:space:]]' \
    "$PVMH" | awk '{ print $2 }' | sort -u)
{
    printf '#include <pvm3.h>\n#include <stdint.h>\n#include <stdio.h>\nint main(void) {\n'
    for c in $names; do
        printf '#ifdef %s\n' "$c"
        printf '    _Generic((%s), char *: printf("%%s \\"%%s\\"\\n", "%s", (const char *)(uintptr_t)(%s)),\n' "$c" "$c" "$c"
        printf '        default: printf("%%s %%lld\\n", "%s", (long long)(intptr_t)(%s)));\n' "$c" "$c"
        printf '#else\n    printf("%%s missing\\n", "%s");\n#endif\n' "$c"
    done
    printf '    return 0;\n}\n'
} >"$tmp/consts.c"
$CCG -std=gnu11 -w -I/usr/include -o "$tmp/c_pvm" "$tmp/consts.c" 2>"$tmp/cc1.err" &&
    $CCG -std=gnu11 -w -I"$top_srcdir/include" -o "$tmp/c_ours" "$tmp/consts.c" 2>"$tmp/cc2.err" &&
    "$tmp/c_pvm" >"$tmp/v_pvm" && "$tmp/c_ours" >"$tmp/v_ours"
ok $? "the constants of PVM's pvm3.h compile against both headers ($(echo $names | wc -w) names)" ||
    sed 's/^/# /' "$tmp"/cc*.err | head -20
diff "$tmp/v_pvm" "$tmp/v_ours" >"$tmp/v_diff"
ok $? "every constant of PVM's pvm3.h has PVM's value in gimpi's" || sed 's/^/# /' "$tmp/v_diff" | head -20

# --- structure layouts -------------------------------------------------------------
{
    echo '#include <pvm3.h>'
    echo '#include <stddef.h>'
    echo '#include <stdio.h>'
    echo '#define F(s, f) printf("%s.%s %zu %zu\n", #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f))'
    echo '#define S(s) printf("%s %zu\n", #s, sizeof(struct s))'
    echo 'int main(void) {'
    awk '/^struct pvm[a-z]*info[[:space:]]*\{/ { s = $2; print "S(" s ");"; next }
         s && /^\}/ { s = ""; next }
         s && /;/ { l = $0; sub(/;.*/, "", l); n = split(l, w, /[ \t*]+/); print "F(" s ", " w[n] ");" }' "$PVMH"
    echo 'return 0; }'
} >"$tmp/layout.c"
$CCG -std=gnu11 -w -I/usr/include -o "$tmp/l_pvm" "$tmp/layout.c" 2>"$tmp/l1.err" &&
    $CCG -std=gnu11 -w -I"$top_srcdir/include" -o "$tmp/l_ours" "$tmp/layout.c" 2>"$tmp/l2.err" &&
    "$tmp/l_pvm" >"$tmp/lo_pvm" && "$tmp/l_ours" >"$tmp/lo_ours" && diff "$tmp/lo_pvm" "$tmp/lo_ours" >"$tmp/lo_diff"
ok $? "pvmhostinfo, pvmtaskinfo, pvmminfo, pvmmboxinfo: PVM's sizes and offsets ($(wc -l <"$tmp/lo_pvm") lines)" ||
    sed 's/^/# /' "$tmp"/l*.err "$tmp/lo_diff" | head -20

# --- symbols -----------------------------------------------------------------------
nm -D --defined-only "$top_builddir/.libs/libgimpi.so" "$ABI"/lib*.so.3 2>/dev/null |
    awk 'NF == 3 { print $3 }' | sort -u >"$tmp/ours"
# PVM's public names: those of its pvm3.h that its libraries define, and its variables
nm -D --defined-only "$DLIB/libpvm3.so.3" "$DLIB/libgpvm3.so.3" | awk 'NF == 3 { print $3 }' |
    grep -E '^(pvm_|Pvm)' | sort -u >"$tmp/pvm_defs"
grep -oE '\b(pvm_|Pvm)[A-Za-z0-9_]+' "$PVMH" | sort -u | comm -12 - "$tmp/pvm_defs" >"$tmp/public"
printf '%s\n' pvm_errno pvm_errlist pvm_nerr pvmdebmask >>"$tmp/public"
sort -u -o "$tmp/public" "$tmp/public"
missing=$(comm -23 "$tmp/public" "$tmp/ours")
[ -z "$missing" ] && [ "$(wc -l <"$tmp/public")" -gt 100 ]
ok $? "every public name of PVM's libraries resolves in gimpi's ($(wc -l <"$tmp/public"))" ||
    echo "# missing: $(echo $missing)"
# what Debian's PVM binaries reference from PVM's libraries
bins=$(dpkg -L pvm-examples 2>/dev/null | grep '^/usr/bin/'; command -v NPpvm)
elfs=
for f in $bins; do
    readelf -d "$f" 2>/dev/null | grep -q 'NEEDED.*libpvm3' && elfs="$elfs $f"
done
nm -D --defined-only "$DLIB/libpvm3.so.3" "$DLIB/libgpvm3.so.3" | awk 'NF == 3 { print $3 }' |
    sort -u >"$tmp/pvm_all"
for f in $elfs; do nm -D -u "$f" | awk '{ print $2 }'; done | sed 's/@.*//' | sort -u |
    comm -12 - "$tmp/pvm_all" >"$tmp/used"
missing=$(comm -23 "$tmp/used" "$tmp/ours")
[ -n "$elfs" ] && [ -z "$missing" ]
ok $? "every libpvm name the $(echo $elfs | wc -w) Debian PVM binaries use resolves ($(wc -l <"$tmp/used"))" ||
    echo "# missing: $(echo $missing)"

# --- the libraries themselves --------------------------------------------------------
bad=
for l in libpvm3 libgpvm3 libfpvm3; do
    d=$(readelf -d "$ABI/$l.so.3" 2>/dev/null)
    echo "$d" | grep -q "SONAME.*\[$l.so.3\]" && echo "$d" | grep -q 'NEEDED.*\[libgimpi.so.0\]' &&
        echo "$d" | grep -q 'RUNPATH.*\[\$ORIGIN/\.\./\.\.\]' || bad="$bad $l"
done
[ -z "$bad" ]; ok $? "libpvm3/libgpvm3/libfpvm3.so.3: PVM's sonames, need libgimpi.so.0, RUNPATH \$ORIGIN/../.." ||
    echo "# wrong:$bad"
sz() { nm -D -S --defined-only "$1" | awk -v s="$2" '$4 == s { print $2 }'; }
szs="$(sz "$ABI/libpvm3.so.3" pvm_errlist) $(sz "$ABI/libpvm3.so.3" pvm_nerr) $(sz "$ABI/libpvm3.so.3" pvmctrc)"
pvms="$(sz "$DLIB/libpvm3.so.3" pvm_errlist) $(sz "$DLIB/libpvm3.so.3" pvm_nerr) $(sz "$DLIB/libpvm3.so.3" pvmctrc)"
[ "$szs" = "$pvms" ]; ok $? "pvm_errlist, pvm_nerr, pvmctrc have PVM's sizes ($szs)"
cat >"$tmp/el.c" <<'C'
#include <pvm3.h>
#include <stdio.h>
#include <string.h>
extern char *pvm_errlist[];
extern int pvm_nerr;
const char *gimpi_strerror(int code);
char *pvm_strerror(void);
int main(void)
{
    printf("%d\n", pvm_nerr);
    for (int i = 0; i < pvm_nerr; i++)
        printf("%s\n", pvm_errlist[i]);
#ifdef GIMPI
    for (int i = 0; i < pvm_nerr; i++)
        if (strcmp(pvm_errlist[i], gimpi_strerror(-i)))
            printf("gimpi_strerror(%d) differs\n", -i);
    pvm_errno = PvmNoTask;
    printf("pvm_strerror: %s\n", pvm_strerror());
#endif
    return 0;
}
C
$CCG $san -std=gnu11 -w -I/usr/include -o "$tmp/el_pvm" "$tmp/el.c" -L"$DLIB" -l:libpvm3.so.3 &&
    $CCG $san -std=gnu11 -w -DGIMPI -I"$top_srcdir/include" -o "$tmp/el_ours" "$tmp/el.c" \
        -L"$ABI" -L"$top_builddir/.libs" -l:libpvm3.so.3 -lgimpi -Wl,-rpath-link,"$top_builddir/.libs" &&
    "$tmp/el_pvm" >"$tmp/el_pvm.out" && (echo "pvm_strerror: No such task" >>"$tmp/el_pvm.out") &&
    LD_LIBRARY_PATH="$ABI:$top_builddir/.libs" "$tmp/el_ours" >"$tmp/el_ours.out" &&
    diff "$tmp/el_pvm.out" "$tmp/el_ours.out" >"$tmp/el.diff"
ok $? "a program using pvm_errlist, pvm_nerr (copy relocations) reads PVM's $(head -1 "$tmp/el_pvm.out") texts" ||
    sed 's/^/# /' "$tmp/el.diff" | head

# --- Debian's binaries load --------------------------------------------------------
bad=
for f in $elfs; do
    o=$(LD_LIBRARY_PATH="$ABI" LD_BIND_NOW=1 ldd -r "$f" 2>&1)
    if echo "$o" | grep -qE 'undefined symbol|not found' || ! echo "$o" | grep -q "$ABI/libpvm3.so.3"; then
        bad="$bad $(basename "$f")"
    fi
done
[ -n "$elfs" ] && [ -z "$bad" ]
ok $? "the $(echo $elfs | wc -w) Debian PVM binaries load through the ABI libraries (LD_BIND_NOW=1, ldd -r)" ||
    echo "# failing:$bad"

# --- make install ------------------------------------------------------------------
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s -C "$top_builddir" DESTDIR="$tmp/inst" \
    install-pvmabiDATA >"$tmp/make.out" 2>&1
d=$(dirname "$(find "$tmp/inst" -name libpvm3.so.3 | head -1)")
[ -r "$d/libgpvm3.so.3" ] && [ -r "$d/libfpvm3.so.3" ] && case $d in */lib*/gimpi/pvm3) true ;; *) false ;; esac
ok $? "make install puts them in \$(libdir)/gimpi/pvm3 under a DESTDIR (${d#"$tmp/inst"})" ||
    sed 's/^/# /' "$tmp/make.out" | tail
exit $((failed > 0))
