#!/bin/bash
# t/vm_trace.sh — gimpirun -trace over two emulated hosts (t/vmhosts.sh, real OpenSSH):
# every task gets the trace directory (GIMPI_TRACE) and its host's clock offset against
# the launcher's (GIMPI_TRACE_OFFSET "ns,error"), measured over round trips to the host's
# agent: 0,0 on the launcher's host, an error bound of half a round trip on the other,
# which grows with the link's delay (netem), and an offset within that bound (the hosts
# share one clock).  Then a master/worker of 4 tasks over the 2 hosts
# (examples/pvm_master_worker) traced: the merged JSON passes t/trace_json_check.py (4
# named threads in 2 processes, nested slices, every flow forwards), it has messages,
# the clocks needed no correction beyond their measured error and no flow was clamped,
# the tasks' directory is gone, and gimpi-trace's page of it, opened in headless
# Chromium, has one row per task and one line per message.  Those last checks skip while the library writes no
# trace file (a job without .gtev files merges into nothing, as gimpirun says).
set -u
top_builddir=${top_builddir:-.}
. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"
. "${top_srcdir:-.}/t/trace_html_lib.sh"

vm_begin 2
printf '%s\n' "$H0" "$H1" >"$VM_DIR/hosts"
CHECK="${top_srcdir:-.}/t/trace_json_check.py"
have_py=no
python3 -c 'import json, decimal' 2>/dev/null && have_py=yes

# run ARGS...: gimpirun on h0 (bounded), output in $out, status in $rc
run() {
    vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="$B/groupd/groupd" GIMPI_PATH="$B/t" \
        timeout -k 10 90 "$RUN" "$@" >"$out" 2>&1
    rc=$?
}

# a task that says what it was given, then takes part in the job as t/job_task
cat >"$VM_DIR/envtask" <<EOF
#!/bin/sh
echo "trace-env \${GIMPI_HOST:-here} \${GIMPI_TRACE:-none} \${GIMPI_TRACE_OFFSET:-none}"
exec "$B/t/job_task" info
EOF
chmod +x "$VM_DIR/envtask"

# offset_of: the offset and error (two words) the task on the other host was given
offset_of() { sed -n "s/^trace-env $H1 [^ ]* \\(-\\{0,1\\}[0-9]*\\),\\([0-9]*\\)\$/\\1 \\2/p" "$out"; }

# within OFF ERR: |OFF| <= ERR and ERR > 0 (one clock: the offset lies inside its bound)
within() { [ -n "${2:-}" ] && [ "$2" -gt 0 ] && [ "${1#-}" -le "$2" ]; }

# --- the environment every task gets
run -trace "$VM_DIR/env.json" -hostfile "$VM_DIR/hosts" -np 2 "$VM_DIR/envtask"
okd $([ $rc = 0 ] && [ "$(count "trace-env")" = 2 ]; echo $?) "-trace: a job of 2 tasks on 2 hosts runs"
ok $([ "$(count " $VM_DIR/env.json.d ")" = 2 ]; echo $?) "both tasks record into FILE.d (GIMPI_TRACE)"
ok $([ "$(count " $VM_DIR/env.json.d 0,0")" = 1 ]; echo $?) "the launcher's host: offset 0, error 0"
read -r off err <<<"$(offset_of)"
okd $(within "${off:-x}" "${err:-0}"; echo $?) "the other host: an offset measured over round trips, within its error bound (${off:-?} ns +- ${err:-?} ns)"
ok $(has "no .gtev file"; echo $?) "a job whose tasks recorded nothing: gimpirun says so"

# --- a slow link: the error bound is half the shortest round trip
if vm_delay 2; then
    run -trace "$VM_DIR/env.json" -hostfile "$VM_DIR/hosts" -np 2 "$VM_DIR/envtask"
    read -r off err <<<"$(offset_of)"
    okd $(within "${off:-x}" "${err:-0}" && [ "$err" -ge 2000000 ]; echo $?) "2 ms each way: the error bound is at least 2 ms, the offset within it (${off:-?} ns +- ${err:-?} ns)"
    vm_delay 0 || true
else
    skip "no netem: the link's delay cannot be set"
fi

# --- the tasks' files come back through the agents when the other host does not share
# the directory: there the agent runs with a private, empty file system (tmpfs) over the
# folder above it, so that it must also make the directory
if [ $have_py = yes ] && command -v unshare >/dev/null; then
    # fake_gtev TID HOST: a small valid trace file of a task (one call, its exit)
    fake_gtev() {
        python3 - "$1" "$2" <<'PY'
import struct, sys, time
tid, host = int(sys.argv[1], 16), sys.argv[2].encode()
now = time.time_ns()
head = struct.pack("=IIiiqqq64s64s88x", 0x56455447, 1, tid, 42, 0, 0, now, host, b"fake")
def rec(kind, ev, t, ints, s=b""):
    pad = (8 - (48 + len(s)) % 8) % 8
    return struct.pack("=IHHq6iHHI", 48 + len(s) + pad, kind, ev, t, *ints, len(s), 0, 0) + s + bytes(pad)
body = rec(1, 26, now + 1000, [0] * 6, b"pvm_mytid") + rec(2, 26, now + 2000, [tid] + [0] * 5)
sys.stdout.buffer.write(head + body + rec(12, 0, now + 3000, [0] * 6))
PY
    }
    fake_gtev 40001 h0 >"$VM_DIR/fake0.gtev"
    fake_gtev 80001 h1 >"$VM_DIR/fake1.gtev"
    cat >"$VM_DIR/faketask" <<EOF
#!/bin/sh
if [ "\$GIMPI_HOST" = "$H1" ]; then f=1; else f=0; fi
cp "$VM_DIR/fake\$f.gtev" "\$GIMPI_TRACE/\$f.gtev"
exec "$B/t/job_task" info
EOF
    cat >"$VM_DIR/agent-own" <<EOF
#!/bin/sh
exec unshare -m --propagation private sh -c 'mount -t tmpfs none "\$0" && exec "\$@"' \
    "$VM_DIR/priv" "$B/programs/gimpi-agent" "\$@"
EOF
    chmod +x "$VM_DIR/faketask" "$VM_DIR/agent-own"
    printf '%s\n' "$H0" "$H1 dx=$VM_DIR/agent-own" >"$VM_DIR/hosts.own"
    mkdir "$VM_DIR/priv"
    run -trace "$VM_DIR/priv/own.json" -hostfile "$VM_DIR/hosts.own" -np 2 "$VM_DIR/faketask"
    okd $([ $rc = 0 ] && [ -f "$VM_DIR/priv/own.json" ]; echo $?) "a host with a file system of its own: its agent makes the directory, sends its tasks' files, the job's trace is merged"
    python3 "$CHECK" "$VM_DIR/priv/own.json" --threads 2 --processes 2 >"$out" 2>&1
    okd $? "with the task of each host in it"
else
    skip "no python3 or unshare: no private directory on a host"
    skip "no python3 or unshare"
fi

# --- a traced master/worker: 4 tasks, 2 hosts
rm -f "$VM_DIR/mw.json"
run -trace "$VM_DIR/mw.json" -hostfile "$VM_DIR/hosts" -np 4 "$B/examples/pvm_master_worker" 1000
okd $([ $rc = 0 ] && has "OK"; echo $?) "-trace: a master/worker of 4 tasks on 2 hosts runs"
if [ ! -f "$VM_DIR/mw.json" ] && has "no .gtev file"; then
    for what in "valid JSON" "messages" "clocks" "directory"; do
        skip "the library records no trace yet: no .gtev file ($what)"
    done
elif [ $have_py = no ]; then
    for what in "valid JSON" "messages" "clocks" "directory"; do skip "no python3 ($what)"; done
else
    python3 "$CHECK" "$VM_DIR/mw.json" --threads 4 --processes 2 --min-slices 8 >"$out" 2>&1
    okd $? "the trace: 4 named threads in 2 processes, slices nested, every flow forwards"
    other() {
        python3 -c 'import json, sys; g = json.load(open(sys.argv[1]))["otherData"]["gimpi"]; print(eval(sys.argv[2]))' \
            "$VM_DIR/mw.json" "$1" 2>&1
    }
    ok $([ "$(other 'g["messages"] > 0')" = True ]; echo $?) "its messages are flows ($(other 'g["messages"]') messages, $(other 'g["unmatched_sends"]') sends unmatched)"
    ok $([ "$(other 'not g["clock"]["beyond_error"] and g["clock"]["flows_clamped"] == 0 and len(g["hosts"]) == 2')" = True ]; echo $?) "the hosts' clocks agree within their measured error: no flow clamped ($(other 'g["hosts"]'))"
    ok $([ ! -e "$VM_DIR/mw.json.d" ]; echo $?) "the tasks' files are removed once merged"
    # the job's trace drawn by gimpi-trace, looked at in headless Chromium
    nmsg=$(other 'g["messages"]')
    if ! th_chrome; then
        skip "no Chromium: the page of the job's trace is not drawn"
    else
        "$B/programs/gimpi-trace" -o "$VM_DIR/mw.html" "$VM_DIR/mw.json" >"$out" 2>&1 &&
            th_dom "$VM_DIR/mw.html"
        okd $([ "$(th_body data-status)" = ok ] && [ "$(th_body data-rows)" = 4 ] &&
            [ "$(th_nodes '<g class="row" data-tid="t[0-9a-f]+"')" = 4 ] &&
            [ "$(th_body data-msgs)" = "$nmsg" ] &&
            [ "$(th_nodes '<line class="msg"')" = "$nmsg" ]; echo $?) \
            "gimpi-trace's page of the job, in Chromium: 4 rows ($(th_tids)), $nmsg message lines"
    fi
fi
echo "1..$n"
exit $((failed > 0))
