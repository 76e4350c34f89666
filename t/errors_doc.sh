#!/bin/bash
# t/errors_doc.sh — doc/errors.md, the list of every error text a user can get, against
# the sources, and the texts against the rules every text keeps.  t/errors_extract.sh
# reads the texts from libgimpi/, programs/, groupd/ and server/ (the format strings of
# fprintf(stderr, ...), of the error buffers' snprintf, and of every function with a
# `const char *fmt` parameter).  It checks: (1) every text of the sources is in
# doc/errors.md, in its section; (2) every text of doc/errors.md is still in the sources;
# (3) doc/errors.md is what `make update-errors-md` writes (its order, its "from" column);
# (4) no text nests parentheses (a man page's `name(1)` is no parenthesis); (5) no text
# puts a <cause>, a text made elsewhere that may hold parentheses of its own, in
# parentheses; (6) a task id is written t%x, as PVM prints it (an argument named *tid,
# or a value after "tid " or "task ", in any other form fails).  Texts of files that
# other work is changing now are listed in KNOWN and reported, not failed.
set -u
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
S=$top_srcdir
echo "1..6"
if ! command -v perl >/dev/null; then
    for i in 1 2 3 4 5 6; do echo "ok $i # SKIP no perl"; done
    exit 0
fi

# Texts that break a rule in a file another piece of work owns today: reported as
# known, not failed.  Drop a line when its text is fixed (the test says which are).
KNOWN='
'

sh "$S/t/errors_extract.sh" "$S" >"$tmp/sites" 2>"$tmp/err" &&
    sh "$S/t/errors_extract.sh" --md "$S" "$S/doc/errors.md" >"$tmp/errors.md" 2>>"$tmp/err"
if [ $? != 0 ] || [ -s "$tmp/err" ] || [ ! -s "$tmp/sites" ]; then
    echo "Bail out! t/errors_extract.sh failed: $(head -5 "$tmp/err")"
    exit 1
fi

# "section<TAB>text", from the sources and from the doc
cut -f1,2 "$tmp/sites" | LC_ALL=C sort -u >"$tmp/src.keys"
perl -ne 'if (/^## (.*)$/) { $s = $1; next }
          next unless defined $s && /^\| (`` .*? ``|`.*?`) \| /;
          ($t = $1) =~ s/^`` (.*) ``$/$1/ or $t =~ s/^`(.*)`$/$1/;
          $t =~ s/\\\|/|/g; print "$s\t$t\n"' "$S/doc/errors.md" | LC_ALL=C sort -u >"$tmp/doc.keys"

# --- 1, 2. the same texts -----------------------------------------------------------
LC_ALL=C comm -23 "$tmp/src.keys" "$tmp/doc.keys" >"$tmp/missing"
[ ! -s "$tmp/missing" ]
ok $? "every text of the sources is in doc/errors.md ($(wc -l <"$tmp/src.keys") texts; make update-errors-md)"
sed 's/^/# missing: /' "$tmp/missing"
LC_ALL=C comm -13 "$tmp/src.keys" "$tmp/doc.keys" >"$tmp/stale"
[ ! -s "$tmp/stale" ]
ok $? "every text of doc/errors.md is in the sources"
sed 's/^/# gone: /' "$tmp/stale"

# --- 3. the doc is the generator's --------------------------------------------------
diff -u "$S/doc/errors.md" "$tmp/errors.md" >"$tmp/md.diff"
ok $? "doc/errors.md is what make update-errors-md writes"
head -20 "$tmp/md.diff" | sed 's/^/# /'

# a rule's offenders: "file<TAB>text" of the sites whose text (or flags) match
offenders() {
    perl -F'\t' -lane "$1" "$tmp/sites" | LC_ALL=C sort -u >"$tmp/bad"
    printf '%s\n' "$KNOWN" | grep . | LC_ALL=C sort -u >"$tmp/known"
    LC_ALL=C comm -23 "$tmp/bad" "$tmp/known" >"$tmp/new"
    LC_ALL=C comm -12 "$tmp/bad" "$tmp/known" | sed 's/^/# known, in a file being changed: /'
    [ ! -s "$tmp/new" ]
}
file_of='($f = $F[2]) =~ s/:.*//;'

# --- 4. no nested parentheses -------------------------------------------------------
offenders "$file_of"'($t = $F[1]) =~ s/\b[\w.-]+\(\d\)//g; $d = $m = 0;
           for (split //, $t) { $d++ if $_ eq "("; $m = $d if $d > $m; $d-- if $_ eq ")" }
           print "$f\t$F[1]" if $m > 1'
ok $? "no text nests parentheses"
sed 's/^/# nested: /' "$tmp/new"

# --- 5. no <cause> in parentheses ---------------------------------------------------
offenders "$file_of"'print "$f\t$F[1]" if $F[1] =~ /\([^()]*<cause>[^()]*\)/'
ok $? "no text puts a <cause> in parentheses"
sed 's/^/# cause in parentheses: /' "$tmp/new"

# --- 6. tids as t%x -----------------------------------------------------------------
offenders "$file_of"'print "$f\t$F[1]" if $F[3] =~ /\btid\b/'
ok $? "every task id is written t%x"
sed 's/^/# tid not t%x: /' "$tmp/new"

# what is left to write by hand (a note, not a failure)
echo "# $(grep -c '^| `.* |  |$' "$S/doc/errors.md") of $(grep -c '^| `' "$S/doc/errors.md") texts have no \"what to do\" yet"
exit $((failed > 0))
