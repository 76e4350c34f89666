#!/bin/bash
# t/trace_html.sh — gimpi-trace's HTML view.  The program: a trace becomes one page that
# needs no network (no src, link, url( or @import; the trace inside with every '<'
# escaped, so a name holding "</script>" cannot end the element), written to FILE.html
# by default or to -o (- for standard output, - as input for standard input); a file that
# is not strict JSON of the trace shape is an error naming line and column (exit 1) and
# leaves no page and no temporary file; usage errors exit 2.  The page, in headless
# Chromium (skipped without it): of the master/worker sample (t/trace_samples/), one
# row per task with the task ids, one line per message (18) with tag and bytes, no
# message drawn ending before it starts, the utilisation strip's three areas, and the
# page's own "#selftest" (wheel zoom, drag pan, button, sweep, fit) passes; of a generic
# trace (array form, B/E pairs, unknown phases, an unnamed thread, a call never
# returned), three rows, two lines, one unreceived message and the stuck task marked;
# of the escaping sample, no injected script ran; of an empty trace, an empty view.
set -u
top_builddir=${top_builddir:-.}
top_srcdir=${top_srcdir:-.}
. "$top_srcdir/t/tap.sh"
. "$top_srcdir/t/trace_html_lib.sh"
T="$top_builddir/programs/gimpi-trace"
S="$top_srcdir/t/trace_samples"
MW="$S/master_worker.json"

# bad NAME WHAT TEXT: TEXT as a trace is refused with exit 1, a message with its
# line:col: and WHAT, and leaves no page nor temporary file behind
bad() {
    local d="$tmp/bad.$n"
    mkdir -p "$d"
    printf '%b' "$3" >"$d/in.json"
    "$T" "$d/in.json" -o "$d/out.html" 2>"$d/err"
    local rc=$?
    [ $rc = 1 ] && grep -Eq "in.json:[0-9]+:[0-9]+: .*$2" "$d/err" && [ "$(ls "$d")" = "$(printf 'err\nin.json')" ]
    ok $? "refused: $1 (exit $rc: $(head -c 150 "$d/err"))"
}
# good NAME TEXT: TEXT is accepted (exit 0)
good() {
    printf '%b' "$2" >"$tmp/good.json"
    "$T" "$tmp/good.json" -o "$tmp/good.html" 2>"$tmp/err"
    ok $? "accepted: $1 $(head -c 150 "$tmp/err")"
}

# --- the program
cp "$MW" "$tmp/mw.json"
"$T" "$tmp/mw.json" 2>"$tmp/err"
ok $? "gimpi-trace FILE.json writes FILE.html"
P="$tmp/mw.html"
[ -s "$P" ] && [ "$(stat -c %a "$P")" = "$(printf '%o' $((0666 & ~$(umask))))" ]
ok $? "the page exists with the umask's mode ($(stat -c %a "$P" 2>&1))"
! grep -Eiq '<script[^>]* src=|<link|<img|<iframe|url\([^#]|@import' "$P"
ok $? "the page loads nothing from elsewhere (no src, link, url( or @import)"
[ "$(grep -o '</script' "$P" | wc -l)" = 2 ] && [ "$(grep -c 'type="application/json" id="gimpi-trace-data"' "$P")" = 1 ]
ok $? "one embedded trace and one script, each closed once"
grep -qF '{"ph":"X","name":"pvm_send","cat":"overhead","ts":' "$P" && grep -qF '"messages":18,' "$P"
ok $? "the trace is in the page verbatim"
"$T" --title 'a <b>&"title' "$MW" -o "$tmp/t.html" && grep -qF '<title>a &lt;b&gt;&amp;&quot;title</title>' "$tmp/t.html"
ok $? "--title sets the page's title, HTML-escaped"
"$T" - -o - <"$MW" >"$tmp/stdio.html" 2>"$tmp/err" && cmp -s <(sed 1,/title/d "$tmp/stdio.html") <(sed 1,/title/d "$P")
ok $? "- reads standard input, -o - writes standard output, the same page"
"$T" "$S/escape.json" -o "$tmp/esc.html" 2>"$tmp/err"
ok $? "a trace whose names hold </script> and <!-- is accepted"
[ "$(grep -o '</script' "$tmp/esc.html" | wc -l)" = 2 ] && ! grep -q '<!--' "$tmp/esc.html" &&
    grep -qF '"t40001 \u003c/script>\u003cscript>' "$tmp/esc.html"
ok $? "... and every '<' of it is written \\u003c: the names cannot close the element"

# --- the check: malformed files are refused with where and what
bad "a trailing comma" "expected in an array|not a JSON value" '{"traceEvents":[1,]}'
bad "an unterminated string" "unterminated string" '{"traceEvents":[{"name":"x'
bad "an unknown escape" "unknown escape" '{"traceEvents":[],"x":"\\q"}'
bad "a control character in a string" "control character" '{"traceEvents":[],"x":"a\tb"}'
bad "invalid UTF-8" "invalid UTF-8" '{"traceEvents":[],"x":"\xff"}'
bad "overlong UTF-8" "invalid UTF-8" '{"traceEvents":[],"x":"\xc0\xaf"}'
bad "UTF-8 of a surrogate" "invalid UTF-8" '{"traceEvents":[],"x":"\xed\xa0\x80"}'
bad "a short \\\\u escape" "four hexadecimal" '{"traceEvents":[],"x":"\\u12"}'
bad "a number with a leading zero" "expected in an object" '{"traceEvents":[],"x":012}'
bad "a number without digits after the point" "digit expected" '{"traceEvents":[],"x":1.}'
bad "NaN" "not a JSON value" '{"traceEvents":[],"x":NaN}'
bad "single quotes" "member name" "{'traceEvents':[]}"
bad "a missing colon" "':' expected" '{"traceEvents" []}'
bad "text after the value" "text after" '{"traceEvents":[]} x'
bad "two values" "text after" '[] []'
bad "an empty file" "empty file" ''
bad "only whitespace" "empty file" ' \n '
bad "a file cut short" "end of the file" '{"traceEvents":[{"ph":"X",'
bad "nesting deeper than 256" "too deep" "{\"traceEvents\":$(printf '[%.0s' $(seq 300))"
bad "a top-level number" "not a trace" '42'
bad "an object without traceEvents" "not a trace" '{"events":[]}'
bad "traceEvents that is not an array" "not a trace" '{"traceEvents":{}}'
printf '{"traceEvents":[\n{"ph":"X"},\n{"ph":"X",]}' >"$tmp/where.json"
"$T" "$tmp/where.json" -o "$tmp/where.html" 2>"$tmp/err"
grep -q "where.json:3:11: " "$tmp/err"
ok $? "the error names line 3, column 11 ($(cat "$tmp/err"))"
good "an array of events, nested 250 deep" "[$(printf '[%.0s' $(seq 249))$(printf ']%.0s' $(seq 250))"
good "a byte-order mark, escapes, UTF-8 and numbers" \
    '\xef\xbb\xbf {"traceEvents":[{"name":"\\u00e9\\ud83d\\ude00\\/\\n","x":"\xc3\xa9\xf0\x9f\x98\x80",
"n":[-0,1.5e-3,2E+9,-12.25]}],"y":[true,false,null]}\r\n'
! grep -q $'\xef\xbb\xbf' "$tmp/good.html"
ok $? "... and the page does not carry the byte-order mark into the script"

# --- usage
"$T" >/dev/null 2>&1; [ $? = 2 ]; ok $? "no file: usage, exit 2"
"$T" a.json b.json >/dev/null 2>&1; [ $? = 2 ]; ok $? "two files: usage, exit 2"
"$T" --bogus "$MW" >/dev/null 2>&1; [ $? = 2 ]; ok $? "an unknown option: usage, exit 2"
"$T" --help | grep -q "usage: gimpi-trace"; ok $? "--help prints the usage"
"$T" "$tmp/none.json" 2>"$tmp/err"; [ $? = 1 ] && grep -q "none.json: No such file" "$tmp/err"
ok $? "a missing file: exit 1 and why ($(cat "$tmp/err"))"
"$T" "$MW" -o "$tmp/no/such/dir.html" 2>"$tmp/err"; [ $? = 1 ] && grep -q "dir.html" "$tmp/err"
ok $? "an output that cannot be written: exit 1 and why ($(cat "$tmp/err"))"
"$T" merge --help >/dev/null 2>"$tmp/err"
! grep -qi "merge: no such file\|usage: gimpi-trace \[-o" "$tmp/err"
ok $? "gimpi-trace merge is the merge subcommand, not a file name"

# --- the page in a real browser
if ! th_chrome; then
    for i in $(seq 15); do skip "chromium is not installed"; done
    echo "1..$n"
    exit $((failed > 0))
fi
th_dom "$P"
[ "$(th_body data-status)" = ok ]
ok $? "chromium draws the master/worker page (status '$(th_body data-status)' $(th_body data-error))" ||
    sed 's/^/# /' "$tmp/chrome.err" | tail -5
tids=$(th_tids)
[ "$tids" = "t40001 t40002 t80001 t80002 " ] && [ "$(th_body data-rows)" = 4 ]
ok $? "one row per task, in host order: $tids"
[ "$(th_nodes '<line class="msg" ')" = 18 ] && [ "$(th_body data-msgs)" = 18 ] &&
    [ "$(th_nodes '<line class="msg" data-tag="[12]" data-bytes="(256|128)" data-src="t[0-9]+" data-dst="t[0-9]+" data-tip="message t[0-9]+ → t[0-9]+ tag [12], (256|128) bytes')" = 18 ]
ok $? "one line per message (18), each with its tag, bytes and a hover text"
back=$(grep -Eo '<line class="msg" [^>]*>' "$tmp/dom" | tee "$tmp/msgs" | sed -E 's/.* x1="([^"]*)" y1="[^"]*" x2="([^"]*)".*/\1 \2/' |
       awk '$2 < $1 { b++ } END { print b + 0 }')
[ "$back" = 0 ] && [ "$(grep -c ' x1="[0-9.]*" y1="[0-9.]*" x2="[0-9.]*" y2=' "$tmp/msgs")" = 18 ]
ok $? "no message line ends before it starts ($back do)"
[ "$(th_nodes '<path class="util-(compute|overhead|wait)" d="M')" = 3 ] &&
    [ "$(th_nodes '<rect class="slice (compute|overhead|wait)"')" -gt 100 ]
ok $? "slices in the three colours, and the utilisation strip's three areas"
slices=$(th_nodes '<rect class="slice (compute|overhead|wait)"')
foot=$(grep -o '<footer>.*</footer>' "$tmp/dom")
case $foot in *'<div class="job">started 2026-11-30 14:00:00 UTC</div><div class="job">clocks: h0 0 ± 0; h1 -1.318 µs ± 37.18 µs</div></footer>') true ;; *) false ;; esac
ok $? "the footer gives the job's start and each host's clock against the reference"
# the same events backwards, without otherData: the format does not ask for any order
{ echo '{"traceEvents":['; grep '^{"ph"' "$MW" | sed 's/,$//' | tac | sed '$!s/$/,/'; echo ']}'; } >"$tmp/rev.json"
"$T" "$tmp/rev.json" && th_dom "$tmp/rev.html"
[ "$(th_tids)" = "t40001 t40002 t80001 t80002 " ] && [ "$(th_nodes '<line class="msg" ')" = 18 ] &&
    [ "$(th_nodes '<rect class="slice (compute|overhead|wait)"')" = "$slices" ] &&
    grep -q '<footer>4 rows, 139 slices, 18 messages\.' "$tmp/dom" && [ "$(th_nodes '<line class="msg-pending"')" = 0 ]
ok $? "the events in reverse order draw the same rows, slices and messages ($(th_tids))"
th_dom "$P" "#selftest"
case $(th_body data-selftest) in ok:*) true ;; *) false ;; esac
ok $? "zoom and pan in the browser: $(th_body data-selftest)"
"$T" "$S/generic.json" -o "$tmp/gen.html" && th_dom "$tmp/gen.html"
[ "$(th_body data-status)" = ok ] && [ "$(th_body data-rows)" = 3 ] && [ "$(th_body data-msgs)" = 2 ]
ok $? "a generic trace: 3 rows, 2 messages (rows $(th_body data-rows), messages $(th_body data-msgs) $(th_body data-error))"
[ "$(th_nodes '<line class="msg-pending"')" = 1 ] && [ "$(th_nodes '<text class="label stuck"')" = 2 ] &&
    [ "$(th_nodes '<rect class="slice wait open"')" = 2 ] && [ "$(th_nodes '<rect class="slice other"')" = 4 ]
ok $? "... the unreceived message, the calls never returned (B alone, unfinished X), other slices"
grep -q '<span class="stuck-list">in a call at the end: 7:2 pvm_recv, 9:0 stuck_call</span>' "$tmp/dom"
ok $? "... and the header names the tasks still in a call at the end"
grep -Eq '<footer>[^<]*ignored: 4 of entries that are not events, 1 of phase C, 1 of phase O, 1 of phase P, 1 of phase X \(no time\), 1 of phase Z, 1 of phase b, 1 of phase e\.' "$tmp/dom"
ok $? "... and the ignored phases are counted in the footer"
th_dom "$tmp/esc.html"
[ "$(th_body data-status)" = ok ] && [ -z "$(th_body data-pwned)" ] && [ "$(th_body data-rows)" = 2 ] &&
    grep -qF '&lt;/script&gt;&lt;script&gt;document.body' "$tmp/dom"
ok $? "names holding </script> are drawn as text, and nothing in them ran"
echo '{"traceEvents":[]}' >"$tmp/empty.json"
"$T" "$tmp/empty.json" && th_dom "$tmp/empty.html"
[ "$(th_body data-status)" = ok ] && [ "$(th_body data-rows)" = 0 ]
ok $? "an empty trace draws an empty view"
printf '{"traceEvents":[{"ph":"X","ts":"soon","pid":{},"tid":[1]},{"ph":"X","ts":1e308,"dur":1e308},
{"ph":"M","name":"process_name","pid":"__proto__","args":{"name":"constructor"}},
{"ph":"M","name":"thread_name","pid":"__proto__","tid":"constructor","args":{"name":"constructor x"}},
{"ph":"X","name":"toString","cat":"__proto__","pid":"__proto__","tid":"constructor","ts":1,"dur":2},
{"ph":"s","cat":"__proto__","id":"constructor","pid":"__proto__","tid":"constructor","ts":1},
{"ph":"constructor","ts":1}],"otherData":{"gimpi":{"tasks":[{"tid":"constructor"}],"hosts":{}}}}' >"$tmp/odd.json"
"$T" "$tmp/odd.json" && th_dom "$tmp/odd.html"
[ "$(th_body data-status)" = ok ] && [ "$(th_body data-rows)" = 1 ]
ok $? "events with odd fields and names do not stop the page ($(th_body data-status) $(th_body data-error))"
echo "1..$n"
exit $((failed > 0))
