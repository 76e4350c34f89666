#!/bin/sh
# t/layers.sh — the layer rule, checked on the sources and on the built objects.
#
# libgimpi is a stack of folders (libgimpi/README.md): base, impi, net | groups, coll, task,
# pvm, fortran, bottom to top; net and groups stand side by side and know nothing of each other.
# server/ sits on base and impi.  programs/ and groupd/ sit on top: they may use any layer
# of the library (and programs/ server/), the library never uses them, and they know
# nothing of each other.  A file may include, and call, only its own folder and those below.
# The test reads every `#include "folder/..."` of the sources, then maps every undefined
# symbol of every object file to the object that defines it (nm) and checks (1) that no
# include or call goes up or sideways, (2) that no two files call each other, directly or
# through others (no cycle among the files: within the library, within programs/, within
# groupd/, and across the whole tree), and (3) that no two files include each other.
. "${top_srcdir:-.}/t/tap.sh"
S=${top_srcdir:-.}
B=${top_builddir:-.}

# rank FOLDER: the folder's height; folders of one height are apart (same height,
# different folder: not allowed).
ranks='base 0
impi 1
net 2
groups 2
server 2
coll 3
task 4
pvm 5
fortran 6
programs 9
groupd 9'
libs=" base impi net groups coll task pvm fortran "

echo "1..9"

# --- 1. includes -------------------------------------------------------------------
# one line per include: FILE FOLDER TO-FOLDER TO-FILE
(cd "$S" && for f in libgimpi/*/*.[ch] server/*.[ch] programs/*.[ch] groupd/*.[ch]; do
    case $f in libgimpi/*) l=${f#libgimpi/}; l=${l%%/*} ;; *) l=${f%%/*} ;; esac
    grep -o '#include "[a-z]*/[^"]*"' "$f" | sed 's/#include "\(.*\)"/\1/' |
        while read -r to; do
            tl=${to%%/*}
            case $libs in *" $tl "*) tf=libgimpi/$to ;; *) tf=$to ;; esac
            echo "$f $l $tl $tf"
        done
done) >"$tmp/inc"
awk -v ranks="$ranks" '
    BEGIN { n = split(ranks, r, "\n"); for (i = 1; i <= n; i++) { split(r[i], kv, " "); h[kv[1]] = kv[2] } }
    !($3 in h) { next }
    $2 != $3 && !(h[$3] < h[$2]) { print $1 " (" $2 ") includes " $3 "/" }' "$tmp/inc" >"$tmp/inc.bad"
[ -s "$tmp/inc" ] && [ ! -s "$tmp/inc.bad" ]
ok $? "every include of libgimpi/, server/, programs/ and groupd/ names its own folder or one below ($(wc -l <"$tmp/inc") includes)"
sed 's/^/# /' "$tmp/inc.bad"

# public headers include only public headers
bad=$(cd "$S" && grep -l '#include "[a-z]*/' include/*.h)
[ -z "$bad" ]
ok $? "include/ headers include only include/ headers"
[ -z "$bad" ] || echo "# $bad"

# cycles: transitive closure over a graph of "FROM TO" lines; every node in a cycle is
# printed with the others of its cycle
cycles() {
    awk '{ e[$1, $2] = 1; v[$1] = 1; v[$2] = 1 }
         END {
             for (k in v) for (i in v) if ((i, k) in e) for (j in v) if ((k, j) in e) e[i, j] = 1
             for (i in v) if ((i, i) in e) { printf "%s:", i; for (j in v) if (j != i && ((i, j) in e) && ((j, i) in e)) printf " %s", j; print "" }
         }' "$1" | sort
}

awk '{ print $1, $4 }' "$tmp/inc" | sort -u >"$tmp/inc.edges"
cycles "$tmp/inc.edges" >"$tmp/inc.cycles"
[ -s "$tmp/inc.edges" ] && [ ! -s "$tmp/inc.cycles" ]
ok $? "no include cycle in the whole tree ($(wc -l <"$tmp/inc.edges") file pairs)"
sed 's/^/# in a cycle: /' "$tmp/inc.cycles"

# --- 2. calls between objects ------------------------------------------------------
objs=$(find "$B/libgimpi" "$B/server" "$B/programs" "$B/groupd" -name '*.o' -not -path '*/.libs/*' 2>/dev/null | sort)
if [ -z "$objs" ]; then
    for i in 4 5 6 7 8 9; do echo "ok $i # SKIP no object files in $B (build first)"; done; exit 0
fi
for o in $objs; do
    rel=${o#"$B"/}
    case $rel in libgimpi/*) l=${rel#libgimpi/}; l=${l%%/*} ;; *) l=${rel%%/*} ;; esac
    name=$(basename "$o" .o); name=${name#*-}      # core_la-x, programs_gimpirun-x, gimpi-x
    [ -f "$S/${rel%/*}/$name.c" ] || continue      # left over from a file since removed
    nm "$o" | awk -v f="$l/$name" '$1 == "U" { print "U " f " " $2 } NF == 3 && $2 ~ /^[TDBRC]$/ && $3 != "main" { print "D " f " " $3 }'
done | sort -u >"$tmp/syms"
# edges: file -> file that defines a symbol it uses (self-references dropped)
awk '$1 == "D" { def[$3] = $2 } $1 == "U" { use[++n] = $2 " " $3 }
     END { for (i = 1; i <= n; i++) { split(use[i], a, " "); if ((a[2] in def) && def[a[2]] != a[1]) print a[1] " " def[a[2]] } }' \
    "$tmp/syms" | sort -u >"$tmp/edges"
nfiles=$(awk '{ print $2 }' "$tmp/syms" | sort -u | wc -l)

awk -v ranks="$ranks" '
    BEGIN { n = split(ranks, r, "\n"); for (i = 1; i <= n; i++) { split(r[i], kv, " "); h[kv[1]] = kv[2] } }
    { split($1, a, "/"); split($2, b, "/"); if (a[1] != b[1] && !(h[b[1]] < h[a[1]])) print $1 " calls " $2 }' \
    "$tmp/edges" >"$tmp/up"
[ -s "$tmp/edges" ] && [ ! -s "$tmp/up" ]
ok $? "every call between $nfiles objects goes to the same folder or one below ($(wc -l <"$tmp/edges") file pairs)"
sed 's/^/# /' "$tmp/up"

# cycles within the library and server/, within programs/, within groupd/, in the tree
for part in library programs groupd tree; do
    case $part in
    library) grep -v -E '(^| )(programs|groupd)/' "$tmp/edges" ;;
    programs | groupd) grep -E "^$part/[^ ]* $part/" "$tmp/edges" ;;
    tree) cat "$tmp/edges" ;;
    esac >"$tmp/edges.$part"
    cycles "$tmp/edges.$part" >"$tmp/cycles.$part"
    case $part in library) what="libgimpi/ and server/" ;; tree) what="whole tree" ;; *) what="$part/" ;; esac
    [ -s "$tmp/edges.$part" ] && [ ! -s "$tmp/cycles.$part" ]
    ok $? "no call cycle among the files of the $what ($(wc -l <"$tmp/edges.$part") file pairs)"
    sed 's/^/# in a cycle: /' "$tmp/cycles.$part"
done

# the shared library carries no server code
so=$(find "$B/.libs" -name 'libgimpi.so' 2>/dev/null | head -n 1)
if [ -z "$so" ]; then
    echo "ok 9 # SKIP no libgimpi.so built"
else
    ! nm -D --defined-only "$so" | grep -q -E ' (impi_server_|gimpi_loop_)'
    ok $? "libgimpi.so has no startup-server code"
fi
exit $((failed > 0))
