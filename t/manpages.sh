#!/bin/bash
# t/manpages.sh — the manual pages: every page in doc/ formats without a warning (man
# --warnings and groff -ww), is listed in doc/Makemodule.am so it installs, and names
# itself in .TH; every installed program (bin_PROGRAMS / bin_SCRIPTS of the Makemodule.am
# files) has a section-1 page; every installed header has its family's page; and once
# the pages are installed (with the aliases of doc/Makemodule.am), `man FUNCTION` finds a
# page for every function an installed header declares.
set -u
top_srcdir=${top_srcdir:-.}
. "${top_srcdir}/t/tap.sh"
S=$top_srcdir
if ! command -v groff >/dev/null || ! command -v man >/dev/null; then
    echo "1..0 # SKIP man or groff is not installed"; exit 0
fi
pages=$(cd "$S/doc" && ls ./*.[1-8] | sed 's|^\./||')
# installed programs and headers, from every Makemodule.am
progs=$(cat "$S"/*/Makemodule.am | sed -n 's/^bin_\(PROGRAMS\|SCRIPTS\) *+\?= *//p' | tr ' ' '\n' |
        sed -n 's|^[a-z]*/||p')
headers=$(cat "$S"/*/Makemodule.am | sed -n 's/^include_HEADERS *+= *//p' | tr ' ' '\n' |
          sed -n 's|^include/||p')
set -- $pages
npages=$#
set -- $progs
nprogs=$#
set -- $headers
echo "1..$((npages * 3 + nprogs + $# * 2 + 4))"

for p in $pages; do
    w=$(cd "$S/doc" && LC_ALL=C MANWIDTH=80 man --warnings=w -l "$p" 2>&1 >/dev/null
        groff -man -ww -z "$p" 2>&1)
    [ -z "$w" ]; ok $? "$p formats without warnings"
    [ -z "$w" ] || printf '%s\n' "$w" | sed 's/^/# /' | head
    grep -Eq "^(dist_man_MANS|man_MANS) *\+?=.*doc/$p( |$)" "$S/doc/Makemodule.am"
    ok $? "$p is installed (doc/Makemodule.am)"
    base=${p%.*} sec=${p##*.}
    th=$(sed -n 's/^\.TH  *\([^ ]*\)  *\([0-9]\).*/\1 \2/p' "$S/doc/$p" | head -1)
    up=$(echo "$base" | tr 'a-z' 'A-Z')
    [ "$th" = "$up $sec" ]; ok $? "$p: .TH says '$up $sec' (it says '$th')"
done
for prog in $progs; do
    [ -f "$S/doc/$prog.1" ]; ok $? "program $prog has doc/$prog.1"
done
# installed: the pages and one alias per name; man finds a function by its name
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL ${MAKE:-make} -s -C "${top_builddir:-.}" DESTDIR="$tmp/inst" \
    install-man install-man3-aliases >"$tmp/make.out" 2>&1
ok $? "make install-man install-man3-aliases into a DESTDIR"
mandir=$(dirname "$(find "$tmp/inst" -name pvm_groups.3 | head -1)")
mandir=${mandir%/man3}
w=$(for f in pvm_joingroup pvm_reduce PvmSum pvm_spawn pvm_pkint gimpi_msg_send gimpi_group_join; do
        MANPATH=$mandir man -w "$f" 2>&1; done | sed "s|^$mandir/||" | tr '\n' ' ')
exp="man3/pvm_groups.3 man3/pvm_collectives.3 man3/pvm_collectives.3 man3/pvm_tasks.3 \
man3/pvm_messages.3 man3/gimpi_msg.3 man3/gimpi_group.3 "
[ "$w" = "$exp" ]; ok $? "man -w finds each function's page: $w"
out=$(MANPATH=$mandir MANWIDTH=80 man pvm_gsize 2>&1 | grep -c "pvm_gsize")
[ "$out" -gt 2 ]; ok $? "man pvm_gsize shows pvm_groups(3) ($out lines name it)"
# every SEE ALSO names a page that is installed (a page of its own or an alias)
dangling=$(for p in $pages; do
    sed -n '/^\.SH SEE ALSO/,/^\.SH /p' "$S/doc/$p" |
        sed -n 's/^\.BR *\([A-Za-z0-9_.-]*\) *(\([0-9]\)).*/\1 \2/p' |
        while read -r name sec; do
            [ -f "$mandir/man$sec/$name.$sec" ] || echo "$p: $name($sec)"
        done
done)
[ -n "$mandir" ] && [ -z "$dangling" ]; ok $? "every SEE ALSO reference is an installed page"
[ -z "$dangling" ] || echo "# dangling: $(echo $dangling)"
for h in $headers; do
    case $h in
        pvm3.h) fam="pvm_*.3" ;;
        *) fam="${h%.h}.3" ;;
    esac
    ls "$S"/doc/$fam >/dev/null 2>&1; ok $? "header $h has its page(s) doc/$fam"
    # every function it declares: a name followed by "(" at the start of a declaration
    fns=$(sed 's|/\*.*\*/||; s|^ *\*.*||' "$S/include/$h" |
          grep -Eo '^[A-Za-z_][A-Za-z0-9_ ]*[ *]+[A-Za-z_][A-Za-z0-9_]*\(' |
          grep -Ev '^(typedef|return|if|while|for|switch)\b' |
          sed -E 's/.*[ *]([A-Za-z_][A-Za-z0-9_]*)\($/\1/' | sort -u)
    missing=$(for f in $fns; do [ -f "$mandir/man3/$f.3" ] || echo "$f"; done)
    # (gimpi_export.h declares only the GIMPI_EXPORT mark, no function)
    { [ -n "$fns" ] || [ "$h" = gimpi_export.h ]; } && [ -n "$mandir" ] && [ -z "$missing" ]
    ok $? "man finds a page for every function of $h ($(echo $fns | wc -w) functions)"
    [ -z "$missing" ] || echo "# missing: $(echo $missing)"
done

exit $((failed > 0))
