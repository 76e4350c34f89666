#!/bin/sh
# t/errors_extract.sh — every error text a user can get from libgimpi, gimpirun, the
# console, gimpi-stat, gimpi-agent, groupd and impi-server, read from the sources; and
# doc/errors.md, the list of them, made from it.
#
# A text is the literal format string given to one of the few funnels errors go through:
#   - fprintf(stderr, FMT, ...) and fprintf(LOG, FMT, ...) where LOG ends in `log`;
#   - snprintf(BUF, size, FMT, ...) where BUF is an error buffer (its last name is err,
#     why, reason, errmsg, cause or msg);
#   - every function of the sources with a parameter `const char *fmt` (gimpi_fail,
#     pvm_ctx_set_cause, msg_fault, srv_log, s_log_refusal, ...: found, not listed),
#     except pvm_packf's, whose fmt is a packing format.
# A format made only of conversions ("%s", "%s: %s") relays a text made elsewhere and is
# not one.  Each conversion is shown as <name>, the name taken from its argument
# (self->host -> <host>, strerror(errno) -> <system error>), and `t%x` of a tid as
# t<tid>.  A C string's escapes are shown as they read (\n dropped, \" as ").
#
#   errors_extract.sh SRCDIR                  one line per site: section, text, file:function,
#                                             and the flags (tid: a task id not written t%x:
#                                             a number named *tid, or a hex number after
#                                             "tid " or "task ")
#   errors_extract.sh --md SRCDIR [OLD.md]    doc/errors.md, keeping the hand-written
#                                             columns of OLD.md by text
exec perl -x "$0" "$@"
#!perl
# (a Perl program: the lines above start it under perl from a shell)
use strict;
use warnings;

my %SECTION_OF = (                  # first match wins: path prefix => section
    'programs/gimpirun.c'       => 'gimpirun',
    'programs/run_'             => 'gimpirun',
    'programs/proctree'         => 'gimpirun',
    'programs/gimpi_agent.c'    => 'gimpi-agent (on another host, shown by gimpirun)',
    'programs/gimpi_console.c'  => 'gimpi, the console',
    'programs/gimpi_stat.c'     => 'gimpi-stat',
    'programs/impi_server_main' => 'impi-server',
    'server/'                   => 'impi-server',
    'groupd/'                   => 'groupd',
    'libgimpi/pvm/'             => 'libgimpi: the PVM calls (causes after PVM\'s text)',
    'libgimpi/fortran/'         => 'libgimpi: the PVM calls (causes after PVM\'s text)',
    'libgimpi/task/'            => 'libgimpi: tasks, spawn and the virtual machine',
    'libgimpi/groups/'          => 'libgimpi: groups and groupd',
    'libgimpi/coll/'            => 'libgimpi: collectives',
    'libgimpi/net/'             => 'libgimpi: the data plane (connections between tasks)',
    'libgimpi/impi/'            => 'libgimpi: the IMPI startup',
    'libgimpi/base/'            => 'libgimpi: host sets, keys, settings',
);
my @SECTIONS = do { my %s; grep { !$s{$_}++ } map { $SECTION_OF{$_} }
    sort { $a cmp $b } keys %SECTION_OF };
@SECTIONS = ((grep { /PVM calls/ } @SECTIONS), 'gimpirun', 'gimpi-agent (on another host, shown by gimpirun)',
             'gimpi, the console', 'gimpi-stat', 'groupd', 'impi-server',
             grep { /^libgimpi/ && !/PVM calls/ } @SECTIONS);

# what a funnel prints before the text it is given ("file:name" for a static function)
my %PREFIX = (
    srv_log => 'impi-server: ', srv_log_limited => 'impi-server: ',
    'groupd/gd_serve.c:s_log_refusal' => 'groupd: ',
);

# names of arguments shown under another name
my %RENAME = (
    strerror => 'system error', zmq_strerror => 'system error', gai_strerror => 'system error',
    errno => 'system error', gimpi_strerror => 'error', impi_strerror => 'error',
    gd_strerror => 'error', err => 'cause', errbuf => 'cause', why => 'cause', lerr => 'cause',
    emsg => 'cause', errmsg => 'cause', reason => 'cause', msg => 'cause', gimpi_msg_errmsg => 'cause',
    argv0 => 'program', prog => 'program', progname => 'program', me => 'program',
    atomic_load_explicit => 'count', atomic_load => 'count', addr16_format => 'address',
    hostset_short => 'text', short => 'text', get32 => 'value',
    WEXITSTATUS => 'status', WTERMSIG => 'signal', strsignal => 'signal name',
    mytid => 'tid', ptid => 'tid', watch => 'tid', src => 'tid', dst => 'tid',
);

my $mode = 'list';
if (@ARGV && $ARGV[0] eq '--md') { $mode = 'md'; shift @ARGV; }
my $src = shift @ARGV // '.';
my $old = shift @ARGV;
chdir $src or die "errors_extract.sh: cannot enter $src: $!\n";

my @files = sort split /\n/, `find libgimpi programs groupd server -name '*.[ch]' | LC_ALL=C sort`;
my (%code, %macro);
for my $f (@files) {
    open my $fh, '<', $f or die "errors_extract.sh: $f: $!\n";
    local $/;
    my $t = <$fh>;
    while ($t =~ /^#\s*define\s+([A-Z][A-Z0-9_]*)\s+("[^"\\\n]*"|\(?-?\d+u?\)?)[ \t]*(?:\/[*\/].*)?$/mg) {
        my ($n, $v) = ($1, $2);
        $v =~ s/^\(|\)$|"|u$//g;
        $macro{$n} = $v;                # a constant: shown as its value
    }
    while ($t =~ /^\s+([A-Z][A-Z0-9_]*)\s*=\s*(\d+),/mg) {
        $macro{$1} = $2;              # an enum constant, the same
    }
    $code{$f} = s_uncomment($t);
}

# --- the funnels: functions with a `const char *fmt` parameter ---------------------------
# A static one counts in its own file only (two files' s_fail may put fmt elsewhere).
my %funnel = (fprintf => 1, snprintf => 2, vsnprintf => 2);
my %local_funnel;                       # file => { name => index of fmt }
for my $f (@files) {
    while ($code{$f} =~ /\b(\w+)\s*\(([^(){};]*\bconst\s+char\s*\*\s*fmt\b[^(){};]*)\)/g) {
        my ($name, $params, $at) = ($1, $2, $-[0]);
        next if $name =~ /^(pvm_packf|pvm_unpackf|s_walk|gimpi_vfail|s_vlog)$/;
        my @p = split /,/, $params;
        my ($i) = grep { $p[$_] =~ /\bfmt\s*$/ } 0 .. $#p;
        next unless defined $i;
        my ($head) = substr($code{$f}, 0, $at) =~ /([^;{}]*)$/;
        if ($head =~ /\bstatic\b/) { $local_funnel{$f}{$name} = $i; }
        else { $funnel{$name} = $i; }
    }
}

# --- the sites -------------------------------------------------------------------------
my @sites;                              # [section, text, where, flags, raw]
for my $f (@files) {
    my ($section) = map { $SECTION_OF{$_} } grep { index($f, $_) == 0 }
        sort { length $b <=> length $a } keys %SECTION_OF;
    next unless $section;
    my $c = $code{$f};
    my $fn = '';
    my $depth = 0;
    my $pos = 0;
    while ($c =~ /\G(?:("(?:[^"\\]|\\.)*")|('(?:[^'\\]|\\.)*')|(\{)|(\})|(\b\w+)\s*\(|(.|\n))/gc) {
        if (defined $3) { $depth++; next; }
        if (defined $4) { $depth-- if $depth > 0; next; }
        next unless defined $5;
        my $name = $5;
        my $start = pos($c);
        if ($depth == 0) {              # a definition's name, when a body follows
            my $rest = substr($c, $start);
            if ($rest =~ /^[^;{}]*?\)\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?\{/s) {
                $fn = $name;
            }
            next;
        }
        my $k = $local_funnel{$f}{$name} // $funnel{$name};
        next unless defined $k;
        my @args = s_args($c, $start);
        next unless @args;
        if ($name eq 'fprintf') {
            next unless $args[0] =~ /^\s*(stderr|\S*\blog)\s*$/;
        } elsif ($name =~ /^v?snprintf$/) {
            next unless $args[0] =~ /(?:^|->|\.)\s*(err|why|reason|errmsg|cause|msg)\s*$/;
        }
        next unless defined $args[$k];
        next if s_traced($c, $start);
        for my $fmt (s_literals($args[$k])) {
            my ($text, $flags) = s_show($fmt, [@args[$k + 1 .. $#args]]);
            $text = ($PREFIX{"$f:$name"} // $PREFIX{$name} // '') . $text;
            next unless s_letters($fmt) && $text !~ /^usage:/i;
            push @sites, [$section, $text, "$f:$fn", $flags, $fmt];
        }
    }
}

if ($mode eq 'list') {
    for my $s (sort { $a->[0] cmp $b->[0] || lc $a->[1] cmp lc $b->[1] } @sites) {
        print join("\t", @$s[0 .. 3]), "\n";
    }
    exit 0;
}
s_markdown();
exit 0;

# --- helpers ---------------------------------------------------------------------------

# The source with its comments blanked (newlines kept), strings and characters untouched.
sub s_uncomment {
    my ($t) = @_;
    $t =~ s{("(?:[^"\\\n]|\\.)*")|('(?:[^'\\\n]|\\.)*')|(/\*.*?\*/)|(//[^\n]*)}{
        defined $1 ? $1 : defined $2 ? $2 : do { my $x = $+; $x =~ s/[^\n]/ /g; $x }
    }gse;
    $t =~ s/^\s*#.*$//mg;               # preprocessor lines (a #define's fprintf is no site)
    return $t;
}

# The arguments of the call whose '(' ends just before $start, split at top-level commas.
sub s_args {
    my ($c, $start) = @_;
    my ($d, $cur, @a) = (1, '');
    pos($c) = $start;
    while ($c =~ /\G("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[()\[\]{}]|,|[^"'()\[\]{},]+)/gc) {
        my $t = $1;
        if ($t =~ /^[(\[{]$/) { $d++; }
        elsif ($t =~ /^[)\]}]$/) { $d--; if ($d == 0) { push @a, $cur; return @a; } }
        elsif ($t eq ',' && $d == 1) { push @a, $cur; $cur = ''; next; }
        $cur .= $t;
    }
    return ();
}

# The format strings an argument can be: its adjacent literals joined (with the
# <inttypes.h> macros put back), or each branch of `cond ? "a" : "b"`; none otherwise.
sub s_literals {
    my ($a) = @_;
    $a =~ s/^\s+|\s+$//g;
    if ($a =~ /^[^"?]*\?\s*((?:"(?:[^"\\]|\\.)*"\s*)+):\s*((?:"(?:[^"\\]|\\.)*"\s*)+)$/s) {
        return (s_literals($1), s_literals($2));
    }
    return () unless $a =~ /^(?:(?:"(?:[^"\\]|\\.)*"|PRI[diuxX](?:8|16|32|64|PTR|MAX))\s*)+$/s;
    my $s = '';
    while ($a =~ /"((?:[^"\\]|\\.)*)"|PRI([diuxX])\w+/g) {
        $s .= defined $1 ? $1 : $2;
    }
    return ($s);
}

# 1 when a format has words of its own: outside its conversions and a leading `program:`
# or `program[...]:` of one of gimpi's programs (such a format relays a text made
# elsewhere; `connect: %s` is a text).
sub s_letters {
    my ($f) = @_;
    $f =~ s/%[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|z|j|t)?[diouxXcspfgeE%]//g;
    $f =~ s/\\[nt]//g;
    $f =~ s/^\s*(?:gimpi|gimpirun|groupd|gimpi-stat|gimpi-agent|impi-server|libpvm)(?:\[[^\]]*\])?:\s*//;
    return $f =~ /[A-Za-z]{2}/;
}

# 1 when the call at $start is a trace, printed only when asked for: the statement that
# holds it, or one of the two blocks around it, is under an `if` whose condition names
# verbose, debug or trace.
sub s_traced {
    my ($c, $start) = @_;
    my $from = $start > 4000 ? $start - 4000 : 0;
    my $before = substr($c, $from, $start - $from);
    my $cond = qr/\bif\s*\([^;{}]*\b\w*(?:verbose|debug|trace)\w*[^;{}]*\)\s*$/i;
    (my $stmt = $before) =~ s/.*[;{}]//s;
    $stmt =~ s/\b\w+\s*\($//;
    return 1 if $stmt =~ /\bif\s*\([^;{}]*\b\w*(?:verbose|debug|trace)\w*/i;
    my $depth = 0;
    for (my $k = length($before) - 1, my $levels = 0; $k >= 0 && $levels < 2; $k--) {
        my $ch = substr($before, $k, 1);
        if ($ch eq '}') { $depth++; }
        elsif ($ch eq '{') {
            if ($depth > 0) { $depth--; next; }
            $levels++;
            my $head = substr($before, $k > 300 ? $k - 300 : 0, $k > 300 ? 300 : $k);
            return 1 if $head =~ $cond;
        }
    }
    return 0;
}

# A text without its leading and trailing blanks.
sub s_trim {
    my ($t) = @_;
    $t =~ s/^\s+|\s+$//g;
    return $t;
}

# What a %s argument shows when it is a literal: the literal; for `c ? A : B` both
# literals as <A|B>, the one that is not empty when the other is (an optional part), or
# the name of the other branch when one is ""; undef otherwise.
sub s_inline {
    my $a = s_trim($_[0]);
    my $str = qr/"(?:[^"\\]|\\.)*"/;
    return s_unquote($a) if $a =~ /^$str$/;
    return undef unless $a =~ /^[^?"]*\?\s*(.*?)\s*:\s*([^:]*)$/s;
    my ($x, $y) = (s_trim($1), s_trim($2));
    my @l = grep { /^$str$/ } ($x, $y);
    if (@l == 2) {
        my ($p, $q) = map { s_unquote($_) } @l;
        return "<$p|$q>" if length $p && length $q;
        return length $p ? $p : $q;
    }
    return undef unless @l == 1 && $l[0] eq '""';
    my $other = $x eq '""' ? $y : $x;
    return exists $macro{$other} ? $macro{$other} : '<' . s_name($other) . '>';
}

# A C string literal's text.
sub s_unquote {
    my ($t) = @_;
    $t =~ s/^"|"$//g;
    $t =~ s/\\n//g;
    $t =~ s/\\(.)/$1/g;
    return $t;
}

# The name an argument is shown under.
sub s_name {
    my ($a) = @_;
    $a =~ s/^\s+|\s+$//g;
    $a =~ s/^\((?:unsigned|int|long|unsigned long|long long|unsigned long long|double|char \*|const char \*|void \*|size_t)\)\s*//;
    return 'value' if $a =~ /\?/;
    return $macro{$a} if exists $macro{$a};
    if ($a =~ /^(\w+)\s*\(/) {
        my $f = $1;
        return $RENAME{$f} if exists $RENAME{$f};
        $f =~ s/^(?:gimpi_|gd_|impi_|msg_|srv_)+(?:groups_|msg_|registry_|vm_|key_|be_)?//;
        return $RENAME{$f} // $f;
    }
    $a =~ s/\[[^\]]*\]//g;
    my ($last) = $a =~ /(\w+)\s*$/;
    return 'value' unless defined $last && $last !~ /^\d/;
    return $macro{$last} if exists $macro{$last};
    return $RENAME{$last} // $last;
}

# The text a user reads for a format and the arguments that fill it, and its flags.
sub s_show {
    my ($fmt, $args) = @_;
    my ($out, @flags) = ('');
    my $i = 0;
    while ($fmt =~ /\G(?:(%%)|%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t)?([diouxXcspfgeE])|(\\.)|([^%\\]+)|(.))/gcs) {
        if (defined $1) { $out .= '%'; next; }
        if (defined $6) {
            my ($w, $p, $conv) = ($3, $4, $6);
            $i++ if defined $w && $w eq "*";
            $i++ if defined $p && $p eq "*";
            my $name = $i < @$args ? s_name($args->[$i]) : 'value';
            $i++;
            my $tx = $out =~ /\bt$/ && $conv =~ /[xX]/;
            $name = 'tid' if $tx;
            if (!$tx && (($name =~ /tid$/ && $conv =~ /[diuxX]/)
                         || ($out =~ /\b(?:tid|task)\s+(?:0x)?$/ && $conv =~ /[xX]/))) {
                push @flags, 'tid';         # a task id not written t%x
            }
            my $lit = $i - 1 < @$args && $conv eq 's' ? s_inline($args->[$i - 1]) : undef;
            if (defined $lit) {             # a literal (or one of two), shown as it is
                $out .= $lit;
                next;
            }
            if ($i - 1 < @$args && exists $macro{s_trim($args->[$i - 1])}) {
                $out .= $name;              # a constant, shown as its value
                next;
            }
            $name =~ s/_/ /g unless $name =~ /^[A-Z0-9_]+$/;
            $out .= "<$name>";
            next;
        }
        if (defined $7) {
            my $e = substr($7, 1);
            $out .= $e eq 'n' ? '' : $e eq 't' ? ' ' : $e;
            next;
        }
        $out .= defined $8 ? $8 : $9;
    }
    $out =~ s/^\s+|\s+$//g;
    my %seen;
    return ($out, join(',', grep { !$seen{$_}++ } @flags));
}

# A text as a Markdown code span in a table cell (`|` escaped; `` `` `` around a text with
# a backtick of its own), and back.
sub s_span {
    my ($t) = @_;
    $t =~ s/\|/\\|/g;
    return $t =~ /`/ ? "`` $t ``" : "`$t`";
}
sub s_unspan {
    my ($t) = @_;
    $t =~ s/^`` (.*) ``$/$1/ or $t =~ s/^`(.*)`$/$1/;
    $t =~ s/\\\|/|/g;
    return $t;
}

# The hand-written columns of an old doc/errors.md: "section\ttext" => [cause, what to do].
sub s_old_columns {
    my ($path) = @_;
    my (%keep, $sec);
    open my $oh, '<', $path or return {};
    while (my $l = <$oh>) {
        chomp $l;
        if ($l =~ /^## (.*)$/) { $sec = $1; next; }
        next unless defined $sec && $l =~ /^\| (`.*?`) \| [^|]* \| ((?:[^|\\]|\\.)*?) ?\| ((?:[^|\\]|\\.)*?) ?\|$/;
        $keep{"$sec\t" . s_unspan($1)} = [$2, $3];
    }
    return \%keep;
}

# doc/errors.md: the sites grouped by text within each section, with the hand-written
# columns of the old file kept by section and text.
sub s_markdown {
    my $keep = defined $old ? s_old_columns($old) : {};
    my %by;
    for my $s (@sites) {
        $by{$s->[0]}{$s->[1]}{$s->[2]} = 1;
    }
    print <<'HEAD';
<!-- Generated from the sources by t/errors_extract.sh (make update-errors-md), which keeps the last two columns, written by hand, by section and text; t/errors_doc.sh compares. -->
# gimpi's error texts

Every error and warning text that libgimpi, gimpirun, the console (`gimpi`), gimpi-stat, gimpi-agent, groupd and impi-server can print, one section per program or layer, sorted by text. To look a message up, search this page for a piece of it that holds no value of your run (no tid, host or number).

A value is shown as `<name>`, named after what fills it: `t<tid>` is a task id in hex (as PVM prints them), `<host>` a host name, `<ep>` or `<endpoint>` a groupd endpoint (`ipc://…` or `tcp://HOST:PORT`), `<system error>` the system's text for errno, `<error>` one of PVM's error texts (pvm_perror(3)), and `<cause>` a text made elsewhere that says why, most often another text of this page: look that one up too. A constant is shown as its value.

A PVM call that fails prints PVM's own text, as PVM does, then gimpi's cause in parentheses: `libpvm [t40003]: pvm_recv(): Can't contact local daemon (t40005 on host h1 closed its connection)`. PVM's texts are in pvm_perror(3); pvm_errcause(3) gives the cause to a program. The causes are below: the first section holds the ones the PVM calls set themselves, the `libgimpi: …` sections at the end those of the layers below.

The texts are read from the sources by `t/errors_extract.sh` (`make update-errors-md` writes this page again and keeps the last two columns, by section and text); t/errors_doc.sh fails when a text of the sources is missing here or one here is gone from the sources, when a text nests parentheses or puts a `<cause>` in them, and when a task id is not written `t<tid>`. An empty "what to do" is one still to be written.

HEAD
    for my $sec (@SECTIONS) {
        next unless $by{$sec};
        print "## $sec\n\n";
        print "| text | from | cause | what to do |\n|---|---|---|---|\n";
        for my $t (sort { lc $a cmp lc $b || $a cmp $b } keys %{ $by{$sec} }) {
            my @w = sort keys %{ $by{$sec}{$t} };
            my %seen;
            my $where = join(', ', grep { !$seen{$_}++ }
                             map { my ($f, $fn) = split /:/, $_; $fn ? "$f $fn" : $f } @w);
            my $k = $keep->{"$sec\t$t"} // ['', ''];
            printf "| %s | %s | %s | %s |\n", s_span($t), $where, @$k;
        }
        print "\n";
    }
}
