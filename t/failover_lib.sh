# t/failover_lib.sh — what t/vm_failover_kill.sh, t/vm_failover_cut.sh and
# t/vm_failover_twice.sh share (sourced after t/tap.sh and t/vmhosts.sh): a job of 8 tasks of
# t/groupd_restart_task over 3 emulated hosts under gimpirun with a standby groupd
# (doc/reliability.md), waits on events (mark files the loop creates, gimpirun's lines),
# and the checks every case makes.  It sources t/tap.sh and t/vmhosts.sh.
#
#   fo_begin PLAN       skips the test when groupd cannot be a standby yet, or for the
#                       known defect $FO_KNOWN names (unless FO_FORCE=1), else 3 hosts
#                       (vm_begin 3) in $VM_DIR/hosts (h0, h1, h2), P (groupd's fixed
#                       port, -gport), RESTART_MARK exported to the tasks; prints the plan
#   fo_wait_file F      waits (60 s) for file F
#   fo_wait_line RE N   waits (60 s) until gimpirun's stderr ($tmp/err) has N lines matching RE
#   fo_pid_on I PORT    the pid listening on tcp PORT on host I
#   fo_run ARGS...      gimpirun -hostfile $VM_DIR/hosts -gport P ARGS on h0, in the
#                       background ($job), its output in $out and $tmp/err (90 s at most);
#                       groupd is $FO_GROUPD_BIN when set (a wrapper, to try options)
#   fo_check_loop N RC  the job ended 0, N tasks "ok", no FAIL, no restart, the longest
#                       call <= 2 s, no journal of the job left in the runtime directory
#                       (the hosts share it) but $FO_KEEP's, no "going on alone" (unless
#                       FO_ALONE_OK=1) (four checks)
#   fo_took_over OLD NEW  gimpirun said the primary on OLD was lost, the standby on NEW
#                       took over, and it manages NEW (true or false)

. "${top_srcdir:-.}/t/tap.sh"
. "${top_srcdir:-.}/t/vmhosts.sh"

FO_ROUNDS=${FO_ROUNDS:-2000}
STALL_MAX_MS=${STALL_MAX_MS:-2000}

# fo_begin PLAN: the skip, the hosts, the names, the plan
fo_begin() {
    local g="${top_builddir:-.}/groupd/groupd"
    "$g" --help 2>&1 | grep -q -- '--standby-of' \
        || vm_skip "groupd has no --standby-of: the standby daemon (issue #27 part 2) is not in this tree"
    [ -z "${FO_KNOWN:-}" ] || [ "${FO_FORCE:-}" = 1 ] || vm_skip "known: $FO_KNOWN (FO_FORCE=1 runs it)"
    vm_begin 3
    # below the kernel's ephemeral range (32768-60999): the tasks' own ports and outgoing
    # connections on the standby's host never take it before the standby binds it
    P=${FO_PORT:-$((21000 + $$ % 4000 * 2))}
    export RESTART_MARK="$VM_DIR/mark" PVM_EXPORT=RESTART_MARK:RESTART_SPAWN_NOT
    rm -f "$RESTART_MARK".*
    printf '%s\n' "$H0" "$H1" "$H2" >"$VM_DIR/hosts"
    echo "1..$1"
}

# fo_run ARGS...: the job, on h0, in the background
fo_run() {
    vm_exec 0 env GIMPI_RSH="$VM_SSH" GIMPI_GROUPD_BIN="${FO_GROUPD_BIN:-$B/groupd/groupd}" GIMPI_PATH="$B/t" \
        timeout -k 10 90 "$RUN" -hostfile "$VM_DIR/hosts" -gport "$P" "$@" >"$out" 2>"$tmp/err" &
    job=$!
    fo_gpid=
}

# fo_gimpirun_pid: gimpirun's pid (the child of the job's `timeout`), kept in fo_gpid
fo_gimpirun_pid() {
    local p=$job i
    for ((i = 0; i < 8; i++)); do
        [ -z "$fo_gpid" ] && [ -n "$p" ] || return 0
        [ "$(cat /proc/"$p"/comm 2>/dev/null)" = timeout ] && fo_gpid=$(pgrep -P "$p" | head -1)
        p=$(pgrep -P "$p" | head -1)
    done
}

# fo_journals_left: the journals of the job (their names hold gimpirun's pid) still in
# the runtime directory, after up to 5 s for the hosts' groupds to end, but for those that
# match $FO_KEEP (a regular expression: a primary lost with its host, cut off, keeps its
# journal there; one lost on a host still reached has it removed through the agent)
fo_journals_left() {
    local dir=${XDG_RUNTIME_DIR:-/tmp/gimpi-$(id -u)} i left
    [ -n "$fo_gpid" ] || { echo "(gimpirun's pid unknown)"; return; }
    for ((i = 0; i < 500; i++)); do
        left=$(ls "$dir"/groupd-tcp-*-"$fo_gpid".journal "$dir"/groupd-tcp-*-"$fo_gpid"-standby-*.journal 2>/dev/null \
            | grep -v -- "${FO_KEEP:-^$}")
        [ -z "$left" ] && return
        sleep 0.01
    done
    echo "$left"
}

# fo_took_over OLD NEW: the takeover from OLD's primary by NEW's standby, and NEW managed
fo_took_over() {
    grep -q "the job's groupd at tcp://$1:$P .*; its standby on $2 takes over at tcp://$2:$P" "$tmp/err" \
        && grep -q "managing the job's groupd at tcp://$2:$P, [0-9]* ms after" "$tmp/err"
}

# fo_wait_file FILE: true once FILE exists (60 s at most)
fo_wait_file() {
    local i
    for ((i = 0; i < 6000; i++)); do [ -e "$1" ] && return 0; sleep 0.01; done
    return 1
}

# fo_wait_line RE N: true once $tmp/err has N lines matching RE (60 s at most); gimpirun's
# pid is taken meanwhile (fo_gimpirun_pid)
fo_wait_line() {
    local i
    fo_gimpirun_pid
    for ((i = 0; i < 6000; i++)); do
        [ "$(grep -c -- "$1" "$tmp/err" 2>/dev/null)" -ge "$2" ] && return 0
        sleep 0.01
    done
    return 1
}

# fo_pid_on I PORT: the pid that listens on tcp PORT on host I (empty when none)
fo_pid_on() {
    vm_exec "$1" ss -ltnpH "sport = :$2" | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}

# fo_check_loop N RC: the job's exit RC is 0, N tasks said "ok", none FAIL, and the
# longest call of any task is at most STALL_MAX_MS (three checks)
fo_check_loop() {
    local want=$1 rc=$2 got stall
    got=$(grep -c " ok rounds=" "$out")
    [ "$rc" = 0 ] && [ "$got" = "$want" ] && ! grep -q FAIL "$out"
    ok $? "$got of $want tasks end ok after $FO_ROUNDS rounds (right sums and memberships, no call failed), exit $rc" \
        || sed 's/^/# /' "$out" "$tmp/err" | head -40
    grep -q "restarted from its journal" "$tmp/err"
    [ $? != 0 ]
    ok $? "the lost primary was not restarted where it ran" || sed 's/^/# /' "$tmp/err" | head -20
    stall=$(sed -n 's/.*stall_ms=\([0-9.]*\).*/\1/p' "$out" | sort -n | tail -1)
    echo "# longest call of any task: ${stall:-?} ms ($(sed -n 's/.*stall_ms=[0-9.]* (\(.*\))/\1/p' "$out" | sort | uniq -c | tr '\n' ' '))"
    awk -v s="${stall:-99999}" -v m="$STALL_MAX_MS" 'BEGIN { exit !(s <= m) }'
    ok $? "longest call ${stall:-?} ms <= $STALL_MAX_MS ms"
    local left
    left=$(fo_journals_left)
    [ -z "$left" ] && { [ "${FO_ALONE_OK:-}" = 1 ] || ! grep -q "going on alone" "$tmp/err"; }
    ok $? "the job's end left no journal (gimpirun ${fo_gpid:-?}) and said no 'going on alone'" \
        || { echo "$left" | sed 's/^/# left: /'; grep -v "^gimpi\[" "$tmp/err" | sed 's/^/# /' | head -40; }
}
