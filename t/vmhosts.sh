# t/vmhosts.sh — a library that shell tests source (after t/tap.sh) to get several
# emulated hosts reached by the real OpenSSH: one network namespace per host, joined by
# veth pairs to a bridge in a "switch" namespace, each host with its own address in
# 198.51.100.0/24 (TEST-NET-2, never routed; t/netns.sh uses TEST-NET-1 so both can run
# at once), its own UTS hostname for the programs started through it, and a real sshd
# listening on its address with host keys, a user key, known_hosts and an ssh_config that
# the test generated.  Host keys are verified (StrictHostKeyChecking yes) and the client
# runs in BatchMode, so nothing ever prompts.  The hosts share the filesystem (the build
# tree is visible everywhere).  The names h0, h1, ... exist only in the ssh_config, so give
# addresses ($VM_ADDRS) to anything that resolves names itself.
#
#   vm_net_up N [NAME]  namespaces, bridge, addresses (no sshd), hosts named NAME0.. (h0..);
#                   sets VM_N, VM_NS, VM_ADDRS, VM_HOSTS (names), VM_PREFIX, VM_DIR, VM_UTS
#   vm_up N         vm_net_up N, then an sshd on every host, ready when it returns; exports
#                   VM_SSH="ssh -F $VM_SSH_CONFIG", VM_RSH (the same), VM_SSH_CONFIG, VM_KEY
#   vm_begin N      vm_up N, then the names a test of gimpirun uses: B (the build tree,
#                   absolute), RUN (its gimpirun), H0 .. H<N-1> (the hosts' addresses),
#                   out ($VM_DIR/out, where the test's run keeps the output)
#   vm_exec I CMD…  runs CMD on host I (its network namespace and hostname hI)
#   vm_ns_add NAME ADDR HOSTNAME   one more namespace on the bridge (t/slurm.sh's controller)
#   vm_link_down I / vm_link_up I  takes host I's link down / up at the bridge
#   vm_delay TIME   adds netem delay (tc time: 100us, 2ms; a bare number is ms) on every
#                   host's eth0, both ways one TIME; returns non-zero when netem is missing
#   vm_down         stops every process in the namespaces, deletes them and VM_DIR; it is
#                   put in front of the EXIT trap already set (t/tap.sh's) by vm_net_up
# vm_net_up and vm_up print "1..0 # SKIP reason" and exit 0 when the machine cannot host
# them (not root, no namespaces, no sshd); a setup step that fails after that is a
# "Bail out!".  Call them before the test prints its plan.

VM_N=0
VM_NS=()
VM_ADDRS=()
VM_HOSTS=()
VM_ALL_NS=()
VM_PREFIX=${VM_PREFIX:-gvm$$}
VM_DIR=""
VM_NET=198.51.100

# vm_skip REASON: the TAP skip of the whole test.
vm_skip() { echo "1..0 # SKIP $*"; exit 0; }

# vm_bail REASON: a setup step that should have worked did not.
vm_bail() { echo "Bail out! $*"; exit 1; }

# vm_trap_first CMD: runs CMD at exit before whatever EXIT trap is already set.
vm_trap_first() {
    local first=$1 cur
    eval "set -- $(trap -p EXIT)"
    cur=${3:-}
    # shellcheck disable=SC2064 # expanded now on purpose
    trap "$first${cur:+; $cur}" EXIT
}

# vm_ns_add NAME ADDR HOSTNAME: a namespace NAME on the bridge with ADDR/24 on eth0, lo
# up, hostname HOSTNAME for what vm_exec and vm_ns_exec start in it.
vm_ns_add() {
    local ns=$1 addr=$2 k=${#VM_ALL_NS[@]}
    ip netns add "$ns" || return 1
    VM_ALL_NS+=("$ns")
    ip link add "$VM_PREFIX-a$k" type veth peer name "$VM_PREFIX-b$k" &&
    ip link set "$VM_PREFIX-a$k" netns "$VM_PREFIX-sw" &&
    ip link set "$VM_PREFIX-b$k" netns "$ns" &&
    ip -n "$VM_PREFIX-sw" link set "$VM_PREFIX-a$k" master br0 up &&
    ip -n "$ns" link set "$VM_PREFIX-b$k" name eth0 &&
    ip -n "$ns" addr add "$addr/24" dev eth0 &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" link set lo up || return 1
    echo "$3" >"$VM_DIR/hostname.$ns"
    echo "$VM_PREFIX-a$k" >"$VM_DIR/link.$ns"
}

# vm_ns_exec NS CMD...: runs CMD in namespace NS under its own hostname (a fresh UTS
# namespace each time; when the kernel refuses one, the machine's hostname is shared).
# It enters only the network namespace (nsenter), not `ip netns exec`'s private /sys:
# the cgroup tree stays mounted (slurmd needs it), /sys/class/net shows the machine's.
vm_ns_exec() {
    local ns=$1 name
    shift
    name=$(cat "$VM_DIR/hostname.$ns" 2>/dev/null)
    if [ -n "$name" ] && [ "$VM_UTS" = yes ]; then
        nsenter --net="/run/netns/$ns" unshare --uts -- \
            sh -c 'echo "$0" >/proc/sys/kernel/hostname && exec "$@"' "$name" "$@"
    else
        nsenter --net="/run/netns/$ns" "$@"
    fi
}

# vm_exec I CMD...: runs CMD on host I.
vm_exec() {
    local i=$1
    shift
    vm_ns_exec "${VM_NS[$i]}" "$@"
}

# vm_net_up N [NAME]: the bridge and N hosts NAME0..NAME(N-1) (default h0..) at
# $VM_NET.(10+i); skips the test when namespaces are unavailable.
vm_net_up() {
    local n=$1 name=${2:-h} i
    [ "$(id -u)" = 0 ] || vm_skip "emulated hosts need root (network namespaces)"
    command -v ip >/dev/null || vm_skip "no ip(8) (iproute2)"
    command -v nsenter >/dev/null && command -v unshare >/dev/null || vm_skip "no nsenter/unshare (util-linux)"
    VM_DIR=$(mktemp -d) || vm_bail "mktemp"
    chmod 755 "$VM_DIR"
    vm_trap_first vm_down
    ip netns add "$VM_PREFIX-sw" 2>"$VM_DIR/netns.err" ||
        vm_skip "network namespaces unavailable: $(head -n 1 "$VM_DIR/netns.err")"
    ip -n "$VM_PREFIX-sw" link add br0 type bridge && ip -n "$VM_PREFIX-sw" link set br0 up ||
        vm_skip "no bridge support in the kernel"
    VM_UTS=no
    unshare --uts true 2>/dev/null && VM_UTS=yes
    for i in $(seq 0 $((n - 1))); do
        VM_NS+=("$VM_PREFIX-h$i")
        VM_ADDRS+=("$VM_NET.$((10 + i))")
        VM_HOSTS+=("$name$i")
        vm_ns_add "$VM_PREFIX-h$i" "$VM_NET.$((10 + i))" "$name$i" || vm_bail "cannot make host namespace $name$i"
    done
    VM_N=$n
    export VM_PREFIX VM_DIR VM_N
}

# vm_sshd_config I: writes host I's sshd_config (listening on its address only, port 22,
# root by key only, no PAM, no DNS) and prints its path.
vm_sshd_config() {
    local i=$1 d="$VM_DIR/h$1"
    cat >"$d/sshd_config" <<EOF
ListenAddress ${VM_ADDRS[$i]}:22
HostKey $d/ssh_host_ed25519_key
PidFile $d/sshd.pid
AuthorizedKeysFile $VM_DIR/authorized_keys
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
UseDNS no
PrintMotd no
MaxStartups 100
MaxSessions 100
LogLevel INFO
EOF
    echo "$d/sshd_config"
}

# vm_ssh_config: writes the client config (aliases hI and the raw addresses, the test's
# key, the test's known_hosts, strict checking, BatchMode, 5 s connect timeout).
vm_ssh_config() {
    local i cfg="$VM_DIR/ssh_config"
    : >"$cfg"
    for i in $(seq 0 $((VM_N - 1))); do
        printf 'Host %s %s\n    HostName %s\n' "${VM_HOSTS[$i]}" "${VM_ADDRS[$i]}" "${VM_ADDRS[$i]}" >>"$cfg"
    done
    cat >>"$cfg" <<EOF
Host *
    User root
    IdentityFile $VM_DIR/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $VM_DIR/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    UpdateHostKeys no
    BatchMode yes
    ConnectTimeout 5
    LogLevel ERROR
EOF
    VM_SSH_CONFIG=$cfg
}

# vm_up N: N hosts, each with a running sshd that accepts the test's key; returns when
# every host has answered an ssh from h0.
vm_up() {
    local n=$1 i k ready
    [ -x /usr/sbin/sshd ] || vm_skip "no /usr/sbin/sshd (openssh-server)"
    command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || vm_skip "no ssh client (openssh-client)"
    vm_net_up "$n"
    mkdir -p /run/sshd                  # sshd's privilege separation directory
    ssh-keygen -q -t ed25519 -N '' -C gimpi-test -f "$VM_DIR/id_ed25519" || vm_bail "ssh-keygen"
    cp "$VM_DIR/id_ed25519.pub" "$VM_DIR/authorized_keys"
    : >"$VM_DIR/known_hosts"
    for i in $(seq 0 $((n - 1))); do
        mkdir -p "$VM_DIR/h$i"
        ssh-keygen -q -t ed25519 -N '' -C "h$i" -f "$VM_DIR/h$i/ssh_host_ed25519_key" || vm_bail "ssh-keygen"
        k=$(cut -d' ' -f1,2 "$VM_DIR/h$i/ssh_host_ed25519_key.pub")
        echo "h$i,${VM_ADDRS[$i]} $k" >>"$VM_DIR/known_hosts"
        /usr/sbin/sshd -t -f "$(vm_sshd_config "$i")" 2>"$VM_DIR/h$i/sshd.log" ||
            vm_bail "sshd -t on h$i: $(head -n 1 "$VM_DIR/h$i/sshd.log")"
        vm_exec "$i" /usr/sbin/sshd -D -e -f "$VM_DIR/h$i/sshd_config" 2>>"$VM_DIR/h$i/sshd.log" &
    done
    vm_ssh_config
    export VM_SSH_CONFIG VM_KEY="$VM_DIR/id_ed25519"
    export VM_SSH="ssh -F $VM_SSH_CONFIG" VM_RSH="ssh -F $VM_SSH_CONFIG"
    # ready: sshd says it listens (its log), then one real ssh from h0 goes through
    for i in $(seq 0 $((n - 1))); do
        ready=no
        for _ in $(seq 1 200); do
            grep -q "Server listening on ${VM_ADDRS[$i]}" "$VM_DIR/h$i/sshd.log" && { ready=yes; break; }
            sleep 0.05
        done
        [ $ready = yes ] || vm_bail "sshd on h$i not listening after 10 s: $(tail -n 1 "$VM_DIR/h$i/sshd.log")"
        vm_exec 0 timeout 10 $VM_SSH "h$i" true 2>"$VM_DIR/h$i/ssh.err" ||
            vm_bail "ssh h0 -> h$i: $(head -n 1 "$VM_DIR/h$i/ssh.err")"
    done
}

# vm_begin N: vm_up N and the names every gimpirun test over the hosts uses (the header)
vm_begin() {
    vm_up "$1"
    B=$(cd "${top_builddir:-.}" && pwd)
    RUN="$B/programs/gimpirun"
    local i
    for ((i = 0; i < VM_N; i++)); do printf -v "H$i" '%s' "${VM_ADDRS[$i]}"; done
    out=$VM_DIR/out
}

# vm_link_down I: host I's veth end on the bridge goes down (a broken cable).
vm_link_down() { ip -n "$VM_PREFIX-sw" link set "$(cat "$VM_DIR/link.${VM_NS[$1]}")" down; }

# vm_link_up I: the cable back.
vm_link_up() { ip -n "$VM_PREFIX-sw" link set "$(cat "$VM_DIR/link.${VM_NS[$1]}")" up; }

# vm_delay TIME: netem delay TIME on every host's eth0 (non-zero when tc or netem is
# missing).
vm_delay() {
    local t=$1 i
    case $t in *[0-9]) t=${t}ms ;; esac
    command -v tc >/dev/null || return 1
    for i in $(seq 0 $((VM_N - 1))); do
        tc -n "${VM_NS[$i]}" qdisc replace dev eth0 root netem delay "$t" 2>/dev/null || return 1
    done
}

# vm_down: stops every process in the namespaces (TERM, 3 s, then KILL), deletes them
# and removes VM_DIR.  Safe to call twice.
vm_down() {
    local ns all=() left
    [ -n "$VM_DIR" ] || return 0
    all=("${VM_ALL_NS[@]}")
    for ns in "${all[@]}"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null; done
    for _ in $(seq 1 30); do
        left=
        for ns in "${all[@]}"; do left=$left$(ip netns pids "$ns" 2>/dev/null); done
        [ -z "$left" ] && break
        sleep 0.1
    done
    for ns in "${all[@]}"; do ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null; done
    for ns in "${all[@]}"; do ip netns del "$ns" 2>/dev/null; done
    ip netns del "$VM_PREFIX-sw" 2>/dev/null
    [ -n "${TAP_KEEP_TMP:-}" ] && cp -r "$VM_DIR" "$TAP_KEEP_TMP.vm"
    rm -rf "$VM_DIR"
    VM_DIR=""
}
