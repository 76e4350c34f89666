#!/bin/bash
# t/pvm_linknames.sh — a PVM build line `cc prog.c -lpvm3 -lgpvm3`, with no gimpicc, links
# against an installed gimpi: installs the library, the headers and the PVM link names
# (libpvm3.so, libgpvm3.so: linker scripts naming libgimpi) into a scratch DESTDIR, builds
# a small PVM program there with the plain compiler and runs it.  Also checks that the
# link names are the one-line scripts and that a link line without them fails (so the
# test would notice if they stopped doing their job).  The installed gimpi.pc gives only
# gimpi's include directory as --cflags (none of libzmq's private flags) and enough
# --libs to link a gimpi program with the plain compiler.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "${top_srcdir}/t/tap.sh"
echo "1..10"
# a sub-make of its own: not the jobserver of the `make check` that may be running us
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s -C "$top_builddir" DESTDIR="$tmp/inst" \
    install-libLTLIBRARIES install-includeHEADERS install-pvmlinkDATA install-pkgconfigDATA \
    >"$tmp/make.out" 2>&1
ok $? "make install of the library, headers and PVM link names into a DESTDIR" ||
    sed 's/^/# /' "$tmp/make.out" | tail -20
lib=$(dirname "$(find "$tmp/inst" -name libpvm3.so | head -1)")
inc=$(dirname "$(find "$tmp/inst" -name pvm3.h | head -1)")
[ -f "$lib/libgpvm3.so" ] && [ -e "$lib/libgimpi.so" ]
ok $? "libpvm3.so and libgpvm3.so are installed beside libgimpi.so ($lib)"
grep -q "INPUT(-lgimpi)" "$lib/libpvm3.so" && grep -q "INPUT(-lgimpi)" "$lib/libgpvm3.so"
ok $? "both are linker scripts naming libgimpi"
cat >"$tmp/p.c" <<'C'
#include <pvm3.h>
#include <stdio.h>
int main(void)
{
    int x[3] = { 1, 2, 3 }, y[3] = { 10, 20, 30 }, n = 3, t = PVM_INT, info = 0, bytes = 0;
    int (*join)(char *) = pvm_joingroup;                /* libgpvm3's part */
    if (!join)
        return 1;
    PvmSum(&t, x, y, &n, &info);
    pvm_initsend(PvmDataDefault);                       /* libpvm3's part */
    pvm_pkint(x, 3, 1);
    pvm_bufinfo(pvm_getsbuf(), &bytes, NULL, NULL);
    printf("sum %d %d %d, info %d, %d bytes packed\n", x[0], x[1], x[2], info, bytes);
    return 0;
}
C
# the compiler gimpi was built with, and its sanitizer flags if any (from gimpicc -show)
read -r cc flags < <("$top_builddir/programs/gimpicc" -show -c x.c)
san=$(printf '%s\n' $flags | grep -- '^-fsanitize' | tr '\n' ' ')
$cc $san -I"$inc" -o "$tmp/p" "$tmp/p.c" -L"$lib" -lpvm3 -lgpvm3 >"$tmp/cc.out" 2>&1
ok $? "cc prog.c -I<include> -L<lib> -lpvm3 -lgpvm3 links" || sed 's/^/# /' "$tmp/cc.out"
out=$(LD_LIBRARY_PATH="$lib" timeout 30 "$tmp/p" 2>&1)
[ "$out" = "sum 11 22 33, info 0, 12 bytes packed" ]; ok $? "the program runs against the installed libgimpi: $out"
readelf -d "$tmp/p" 2>/dev/null | grep -q 'NEEDED.*libgimpi'; ok $? "the program needs libgimpi.so itself"
$cc $san -I"$inc" -o "$tmp/q" "$tmp/p.c" -L"$lib" >/dev/null 2>&1
[ $? -ne 0 ]; ok $? "without -lpvm3 -lgpvm3 the same link fails (the names do the work)"

# pkg-config on the installed gimpi.pc (its paths under the DESTDIR through the sysroot)
pc=$(dirname "$(find "$tmp/inst" -name gimpi.pc | head -1)")
export PKG_CONFIG_PATH="$pc" PKG_CONFIG_SYSROOT_DIR="$tmp/inst"
cflags=$(pkg-config --cflags gimpi 2>&1)
[ "$(echo $cflags)" = "-I$inc" ]
ok $? "pkg-config --cflags gimpi gives gimpi's include directory alone: $cflags"
echo "$cflags" | grep -Eq 'mit-krb5|pgm|libxml2'
[ $? = 1 ]; ok $? "... none of libzmq's private flags (mit-krb5, pgm, libxml2)"
cat >"$tmp/v.c" <<'C'
#include <gimpi.h>
#include <stdio.h>
int main(void) { printf("%s\n", gimpi_strerror(GIMPI_ENOGROUP)); return 0; }
C
# shellcheck disable=SC2046
$cc $san -o "$tmp/v" "$tmp/v.c" $(pkg-config --cflags --libs gimpi) >"$tmp/cc2.out" 2>&1 &&
    [ "$(LD_LIBRARY_PATH="$lib" timeout 30 "$tmp/v" 2>&1)" = "No such group" ]
ok $? "cc prog.c \$(pkg-config --cflags --libs gimpi) builds a program that runs" ||
    sed 's/^/# /' "$tmp/cc2.out"
exit $((failed > 0))
