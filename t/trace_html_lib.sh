# t/trace_html_lib.sh — what a shell test sources (after t/tap.sh) to look at a page of
# gimpi-trace in headless Chromium: th_chrome finds the browser, th_dom loads a page and
# keeps the DOM its script built, th_body and th_nodes read it.  A test of a real job's
# trace (gimpirun -trace, then gimpi-trace) checks its rows and message lines with these:
#     th_chrome || skip...; th_dom "$tmp/run.html"; [ "$(th_body data-rows)" = 4 ]
# The page's body carries data-status (ok or error, then data-error), data-rows and
# data-msgs; each task is a <g class="row" data-tid="t40001">, each message a
# <line class="msg" data-tag data-bytes data-src data-dst>.
TH_CHROME=
# th_chrome: finds headless Chromium (chromium, chromium-browser, google-chrome) into
# TH_CHROME; 1 when there is none
th_chrome() {
    local c
    for c in chromium chromium-browser google-chrome; do
        command -v "$c" >/dev/null 2>&1 && { TH_CHROME=$c; return 0; }
    done
    return 1
}
# th_dom PAGE [#HASH]: the DOM of PAGE once its script ran, on one line (the hover texts
# hold newlines) in $tmp/dom; Chromium's messages in $tmp/chrome.err
th_dom() {
    local page=$1
    case $page in /*) ;; *) page=$PWD/$page ;; esac
    timeout 90 "$TH_CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
        --user-data-dir="$tmp/chrome-profile" --window-size=1200,800 --virtual-time-budget=5000 \
        --dump-dom "file://$page${2:-}" 2>"$tmp/chrome.err" | tr '\n' ' ' >"$tmp/dom"
}
# th_body ATTR: the value of the attribute ATTR of the page's body
th_body() { grep -o '<body[^>]*>' "$tmp/dom" | grep -o " $1=\"[^\"]*\"" | sed 's/^[^"]*"//; s/"$//'; }
# th_nodes REGEX: how many matches of REGEX (grep -E) the DOM has
th_nodes() { grep -Eo "$1" "$tmp/dom" | wc -l; }
# th_tids: the data-tid of every row, in order, on one line
th_tids() { grep -Eo '<g class="row" data-tid="[^"]*"' "$tmp/dom" | sed 's/.*data-tid="//; s/"//' | tr '\n' ' '; }
