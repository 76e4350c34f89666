#!/bin/bash
# fuzz/make-corpus.sh — writes the committed seed corpora fuzz/corpus/<target>/ of the
# libFuzzer targets: small valid (and a few deliberately wrong) inputs in each target's
# input layout, mostly the IMPI draft's worked examples (doc/impi-protocol.md §3.12).
# Re-run it after changing a target's input layout: `bash fuzz/make-corpus.sh`.
set -eu
cd "$(dirname "$0")"
mkdir -p corpus && cd corpus

# Big-endian Int4 / Int8 of each argument, as raw bytes.
be32() { for v in "$@"; do printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' \
    $(((v >> 24) & 255)) $(((v >> 16) & 255)) $(((v >> 8) & 255)) $((v & 255)))"; done; }
be64() { for v in "$@"; do be32 $((v >> 32)) $((v & 0xffffffff)); done; }
# Raw bytes given as decimal numbers.
bytes() { for v in "$@"; do printf "$(printf '\\x%02x' "$v")"; done; }
# seed TARGET NAME: writes stdin to TARGET/NAME.
seed() { mkdir -p "$1"; cat >"$1/$2"; }

AUTH=0x41555448 IMPI=0x494D5049 COLL=0x434F4C4C DONE=0x444F4E45 FINI=0x46494E49
C_VERSION=0x1000 C_NHOSTS=0x1100 C_NPROCS=0x1200 C_DATALEN=0x1300 C_TAGUB=0x1400
C_XSIZE=0x1500 C_MAXLINEAR=0x1600 H_IPV6=0x2000 H_PORT=0x2100 H_NPROCS=0x2200
H_ACKMARK=0x2300 H_HIWATER=0x2400 P_IPV6=0x3000 P_PID=0x3100
# 127.0.0.1 in the IPv4-compatible 16-byte form.
loop4() { bytes 0 0 0 0 0 0 0 0 0 0 0 0 127 0 0 1; }

# fuzz_cmd: 8-byte header, then the payload.
{ be32 $AUTH 4 3; } | seed fuzz_cmd auth
{ be32 $IMPI 4 3; } | seed fuzz_cmd impi
{ be32 $COLL 8 $C_NHOSTS 3; } | seed fuzz_cmd coll-nhosts
{ be32 $COLL 16 $H_PORT 5001 5002 5003; } | seed fuzz_cmd coll-port
{ be32 $COLL 20 $C_VERSION; be64 0 1; } | seed fuzz_cmd coll-version
{ be32 $COLL 20 $P_IPV6; loop4; } | seed fuzz_cmd coll-p-ipv6
{ be32 $DONE 0; } | seed fuzz_cmd "done"
{ be32 $FINI 0; } | seed fuzz_cmd fini
{ be32 $COLL 0x80000000; } | seed fuzz_cmd coll-huge
{ be32 0x58585858 0; } | seed fuzz_cmd unknown

# fuzz_auth: raw reply (which, len), then client and server masks.
{ be32 1 8 3 3; } | seed fuzz_auth key
{ be32 0 0 1 3; } | seed fuzz_auth none
{ be32 7 0 2 1; } | seed fuzz_auth unknown

# fuzz_coll: a client's COLL payload (label, elements).
{ be32 $C_VERSION; be64 0 1; } | seed fuzz_coll version
{ be32 $C_NHOSTS 3; } | seed fuzz_coll nhosts
{ be32 $C_NPROCS 4; } | seed fuzz_coll nprocs
{ be32 $C_DATALEN 8000; } | seed fuzz_coll datalen
{ be32 $C_TAGUB 32767; } | seed fuzz_coll tagub
{ be32 $C_XSIZE -1; } | seed fuzz_coll xsize
{ be32 $C_MAXLINEAR 4; } | seed fuzz_coll maxlinear
{ be32 $H_IPV6; loop4; loop4; } | seed fuzz_coll h-ipv6
{ be32 $H_PORT 5001 5002; } | seed fuzz_coll h-port
{ be32 $H_NPROCS 2 1; } | seed fuzz_coll h-nprocs
{ be32 $H_ACKMARK 10; } | seed fuzz_coll h-ackmark
{ be32 $H_HIWATER 20; } | seed fuzz_coll h-hiwater
{ be32 $P_IPV6; loop4; } | seed fuzz_coll p-ipv6
{ be32 $P_PID; be64 4242 4243; } | seed fuzz_coll p-pid
{ be32 $C_TAGUB 100; } | seed fuzz_coll tagub-too-small

# fuzz_coll_reply: nclients, with_counts, nclients count bytes, then the reply payload
# (label, mask, concatenated data): the draft's three-client examples ("seed 000", "seed
# 003", doc/impi-protocol.md §3.12).
{ bytes 3 0 1 1 1; be32 $C_NHOSTS 7 3 2 2; } | seed fuzz_coll_reply nhosts
{ bytes 3 0 1 1 1; be32 $C_DATALEN 5 8000 4000; } | seed fuzz_coll_reply pktlen-mask5
{ bytes 3 1 3 2 2; be32 $H_PORT 7 5001 5002 5003 6001 6002 7001 7002; } | seed fuzz_coll_reply h-port
{ bytes 3 0 1 1 1; be32 $C_VERSION 7; be64 0 0 1 0 1; } | seed fuzz_coll_reply version
{ bytes 2 1 1 2; be32 $P_PID 3; be64 11 21 22; } | seed fuzz_coll_reply p-pid

# fuzz_packet: 128-byte header, then Uint4 max_data and a format-buffer size byte.
# packet TYPE LEN MSGLEN: a header from 127.0.0.1/11 to 127.0.0.1/12, tag 3, cid 1.
packet() {
    be32 "$1" "$2"; loop4; be64 11; loop4; be64 12
    be64 7 9 "$3"; be32 0 3; be64 1 42 "$3" 2 0
}
{ packet 0 8 8; be32 8000; bytes 255; } | seed fuzz_packet data
{ packet 1 100 1000; be32 4096; bytes 255; } | seed fuzz_packet datasync
{ packet 3 128 128; be32 16; bytes 20; } | seed fuzz_packet syncack
{ packet 2 128 0; } | seed fuzz_packet protoack
{ packet 4 128 0; } | seed fuzz_packet cancel
{ packet 7 128 0; } | seed fuzz_packet fini
{ packet 0 9000 9000; be32 8000; bytes 1; } | seed fuzz_packet data-too-long

# fuzz_gd_serve: requests [nframes][connection] then frames [Uint2 len][bytes]; the first
# frame a groupd header 'G' 'D' version kind reqid.
frame() { local len=$1; shift; bytes $((len >> 8)) $((len & 255)); "$@"; }
hdr() { bytes 71 68 2 "$1"; be32 "$2"; }
register() { bytes 6 "$1"; frame 8 hdr 2 1; frame 24 bytes $(seq 1 24); frame 16 loop4
             frame 4 be32 5000; frame 4 be32 77; frame 1 printf h; }
join() { bytes 2 "$1"; frame 8 hdr 4 2; frame 1 printf g; }
barrier() { bytes 3 "$1"; frame 8 hdr 9 3; frame 1 printf g; frame 4 be32 2; }
{ register 0; register 1; join 0; join 1; barrier 0; barrier 1; } | seed fuzz_gd_serve join-barrier
{ bytes 3 0; frame 8 hdr 16 1; frame 3 printf job; frame 4 be32 3
  bytes 7 2; frame 8 hdr 15 2; frame 24 bytes $(seq 1 24); frame 16 loop4; frame 4 be32 1
  frame 4 be32 2; frame 1 printf h; frame 4 be32 262145; frame 16 bytes $(seq 1 16); } |
    seed fuzz_gd_serve reserve-hijack
{ register 0; join 0; bytes 2 3; frame 8 hdr 12 4; frame 0 true; } | seed fuzz_gd_serve stat
{ bytes 1 1; frame 8 hdr 13 1; bytes 1 1; frame 8 bytes 71 68 1 13 0 0 0 1; } | seed fuzz_gd_serve ping-old-version
# the virtual machine: connection 0 becomes the manager, 1 asks; VMWAIT, VMREP, TASK_EXIT
{ bytes 3 0; frame 8 hdr 18 1; frame 4 be32 1; frame 2 printf h1
  bytes 1 1; frame 8 hdr 17 2; register 1; bytes 2 1; frame 8 hdr 20 3; frame 4 be32 0; frame 1 printf p
  bytes 2 1; frame 8 hdr 19 4; frame 0 true
  bytes 2 1; frame 8 hdr 21 5; frame 3 printf req; bytes 1 0; frame 8 hdr 22 6
  bytes 4 0; frame 8 hdr 23 7; frame 4 be32 1; frame 4 be32 0; frame 2 printf ok
  bytes 3 0; frame 8 hdr 24 8; frame 4 be32 262145; frame 4 be32 0; } | seed fuzz_gd_serve vm-relay
{ bytes 3 2; frame 8 hdr 18 1; frame 4 be32 0; frame 0 true
  bytes 2 3; frame 8 hdr 21 2; frame 1 printf x; bytes 1 2; frame 8 hdr 22 3
  bytes 3 3; frame 8 hdr 24 4; frame 4 be32 1; frame 4 be32 0; } | seed fuzz_gd_serve vm-unknown-conns
# the message box: 0 puts m and w, 1 waits for w (then woken), lists, deletes, reads and
# deletes at once; an unregistered connection 2 puts (PvmNoTask); 0 replaces m quietly
# (MBOX_PUTQ)
mput() { bytes 6 "$1"; frame 8 hdr 27 "$2"; frame ${#3} printf "$3"; frame 4 be32 4294967295
         frame 4 be32 "$4"; frame 4 be32 0; frame 4 be32 "$2"; }
mget() { bytes 4 "$1"; frame 8 hdr 28 "$2"; frame ${#3} printf "$3"; frame 4 be32 "$4"
         frame 4 be32 "$5"; }
{ register 0; register 1; mput 0 1 m 2; mput 0 2 m 2; mget 1 3 w 0 32; mput 0 4 w 1
  bytes 2 1; frame 8 hdr 30 5; frame 1 printf '*'; mget 1 6 m 1 24
  bytes 4 0; frame 8 hdr 29 7; frame 1 printf m; frame 4 be32 0; frame 4 be32 0
  mput 2 8 x 0; mput 0 9 m 0; bytes 6 0; frame 8 hdr 31 10; frame 1 printf m; frame 4 be32 0
  frame 4 be32 0; frame 4 be32 0; frame 4 be32 11; } | seed fuzz_gd_serve mbox
# the live view: 0 publishes its status (the tid groupd gave it), asks for the statuses,
# clears it; 1 (registered) publishes one about 0 (refused), 2 (unregistered) one at all
tstatus() { bytes 6 "$1"; frame 8 hdr 33 "$2"; frame 4 be32 "$3"; frame ${#4} printf "$4"
            frame 4 be32 300; frame 4 be32 2; frame 4 be32 262146; }
{ register 0; register 1; tstatus 0 2 262145 'pvm_recv(t40002, tag 7)'; tstatus 1 3 262145 x
  tstatus 2 4 262147 y; bytes 1 3; frame 8 hdr 34 5; tstatus 0 6 262145 ''
  bytes 1 3; frame 8 hdr 34 7; } | seed fuzz_gd_serve live-status

# fuzz/impi.dict: the protocol's magic numbers as big-endian Int4 tokens, handed to every
# target with -dict so that mutations find commands, labels and packet types quickly.
# dict NAME VALUE: one libFuzzer dictionary line.
dict() { printf '%s="\\x%02x\\x%02x\\x%02x\\x%02x"\n' "$1" \
    $((($2 >> 24) & 255)) $((($2 >> 16) & 255)) $((($2 >> 8) & 255)) $(($2 & 255)); }
{
    echo "# generated by fuzz/make-corpus.sh: IMPI commands, labels, packet types, masks"
    for n in AUTH IMPI COLL DONE FINI C_VERSION C_NHOSTS C_NPROCS C_DATALEN C_TAGUB C_XSIZE \
             C_MAXLINEAR H_IPV6 H_PORT H_NPROCS H_ACKMARK H_HIWATER P_IPV6 P_PID; do
        dict "$n" "${!n}"
    done
    for t in 0 1 2 3 4 5 6 7; do dict "packet_type_$t" $t; done
    dict mask_3_clients 7
    dict tagub_min 32767
    dict minus_one 0xffffffff
} >../impi.dict

# fuzz_intro: mode byte (1 seal, 2 proper hello), HELLO, INTRO (marker, version, tid,
# target 0x1001, pktlen, ackmark, hiwater, proc, contact, port, nonce, MAC), then more.
intro() { be32 0xFF474448 2 "$1" 0x1001 65536 10 20; loop4; be64 42; loop4; be32 5000;
          bytes 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0; bytes $(seq 1 32 | sed 's/.*/0/'); }
{ bytes 3; be32 0xFF474448 2; intro 0x2002; } | seed fuzz_intro sealed-even
{ bytes 3; be32 0xFF474448 2; intro 0x2003; } | seed fuzz_intro sealed-odd
{ bytes 2; be32 0xFF474448 2; intro 0x2002; } | seed fuzz_intro unsealed
{ bytes 0; be32 0xFF474448 1; } | seed fuzz_intro old-version
{ bytes 0; be32 1 0; } | seed fuzz_intro rank

# fuzz_hostset: mode byte (0 hostfile lines, 1 Slurm variables on three lines, 2 -H list),
# then text.
{ bytes 0; printf '# c\n* lo=guest wd=/s sp=500\nthud slots=4\n&igor ep=a:b\nigor\nx ip=10.0.0.1 arch=L\n'; } |
    seed fuzz_hostset hostfile
{ bytes 0; printf 'a so=pw\nb frob=1\nc:2\n-x\n'; } | seed fuzz_hostset hostfile-bad
{ bytes 1; printf 'node[01-03,7],gpu5,rack[1-2]-n[3-4]\n2(x3),1(x2),3(x4)\n'; } |
    seed fuzz_hostset slurm
{ bytes 1; printf 'c[8-11]\n\n16(x4)\n'; } | seed fuzz_hostset slurm-cpus
{ bytes 1; printf 'n[5-1],a[1-9999]\n1\n'; } | seed fuzz_hostset slurm-bad
{ bytes 2; printf 'a,b:2,[fe80::1]:3,fe80::2,a'; } | seed fuzz_hostset list

# fuzz_coll_shm: 64-byte offer (little-endian), then a segment header.  The fixed segment
# the target checks against when the offer does not decode: 4 members, 4 KiB slots, nonce
# 0..15; its header carries an FNV-1a checksum over its first 56 bytes.
python3 - <<'PY'
import struct
def fnv(b):
    h = 2166136261
    for c in b:
        h = ((h ^ c) * 16777619) & 0xffffffff
    return h
nonce = bytes(range(16))
def header(n, size, chunk):
    h = struct.pack('<IIIIQQ', 0x48534347, 1, n, 0, size, chunk) + nonce + bytes(8)
    return h + struct.pack('<I', fnv(h)) + bytes(4)
def offer(n, size, chunk):
    return bytes(16) + struct.pack('<IiiiQQ', 1000, 4242, 7, n, size, chunk) + nonce
import os
os.makedirs('fuzz_coll_shm', exist_ok=True)
size = 4096 + 4 * 2 * 4096
seeds = {
    'valid': offer(4, size, 4096) + header(4, size, 4096),
    'no-offer': bytes(64) + header(4, size, 4096),
    'bad-checksum': offer(4, size, 4096) + header(4, size, 4096)[:56] + bytes(8),
    'offer-only': offer(4, size, 4096),
}
for name, b in seeds.items():
    open('fuzz_coll_shm/' + name, 'wb').write(b)
PY
# fuzz_ring: 3-byte steps (opcode mod 7, 16-bit argument little-endian): 0 write N,
# 1 read N, 2 / 3 the peer moves the head / tail, 4 sleep flags, 5 scribble, 6 arm.
{ bytes 0 100 0  1 50 0  1 200 0  0 0 16  1 0 32  0 255 15  1 255 15; } | seed fuzz_ring wrap
{ bytes 6 1 0  0 8 0  6 2 0  1 4 0  1 4 0  6 0 0; } | seed fuzz_ring flags
{ bytes 0 0 16  0 1 0  2 1 64  1 0 16  3 0 1  0 0 16; } | seed fuzz_ring corrupt

# fuzz_pvm_header: a whole PVM message as the transport takes it: 16-byte header ('P',
# version 1, encoding, flags, context, body length), the wait id (flag 4), the bcast
# number (flags 3), then the inline body (without flag 1).
pvmhdr() { bytes 80 1 "$1" "$2"; be32 "$3"; be64 "$4"; }
{ pvmhdr 0 0 0 4; bytes 0 0 0 42; } | seed fuzz_pvm_header inline-base
{ pvmhdr 1 0 538970113 0; } | seed fuzz_pvm_header empty-context
{ pvmhdr 0 1 -1 1000000; } | seed fuzz_pvm_header follows-wildcard-context
{ pvmhdr 1 3 4096 70000; be64 5; } | seed fuzz_pvm_header bcast-body
{ pvmhdr 0 0 0 9; bytes 1 2 3; } | seed fuzz_pvm_header short-body
{ pvmhdr 2 8 0 0; } | seed fuzz_pvm_header bad-flags
{ pvmhdr 0 4 0 4; be32 77; bytes 0 0 0 42; } | seed fuzz_pvm_header inline-wid
{ pvmhdr 1 7 5 70000; be32 -3; be64 9; } | seed fuzz_pvm_header bcast-wid

# fuzz_trace_merge: a flags byte (bit 0: partial; bits 1-2: files - 1), then the files,
# each but the last after its length (2 bytes, little-endian); each file a task's trace
# (base/gimpi_tev.h) in this machine's order: header, then records.
python3 - <<'PY'
import os, struct
os.makedirs('fuzz_trace_merge', exist_ok=True)
T0 = 1790000000000000000
def head(tid, host, prog, off=0, err=0):
    return struct.pack('<IIiiqqq64s64s88x', 0x56455447, 1, tid, 42, off, err, T0 - off,
                       host.encode(), prog.encode())
def rec(kind, ev, us, ints=(), s=b'', off=0):
    i = (list(ints) + [0] * 6)[:6]
    pad = (8 - (48 + len(s)) % 8) % 8
    return struct.pack('<IHHq6iHHI', 48 + len(s) + pad, kind, ev, T0 + us * 1000 - off, *i,
                       len(s), 0, 0) + s + bytes(pad)
def inp(flags, files):
    b = bytes([flags | (len(files) - 1) << 1])
    for f in files[:-1]:
        b += struct.pack('<H', len(f)) + f
    return b + files[-1]
send = head(0x40001, 'h0', 'master') + rec(1, 33, 10, (0x80001, 7), b'pvm_send') \
    + rec(3, 0, 11, (0x80001, 7, 0, 64, 1)) + rec(2, 33, 12) + rec(12, 0, 20)
recv = head(0x80001, 'h1', 'worker', 5000, 9000) + rec(1, 36, 5, (-1, 7), b'pvm_recv', 5000) \
    + rec(5, 0, 8, (1,), off=5000) + rec(4, 0, 9, (0x40001, 7, 0, 64, 1), off=5000) \
    + rec(2, 36, 9, (1,), off=5000) + rec(12, 0, 30, off=5000)
points = head(0x40002, 'h0', 'points') + rec(6, 0, 1, (3,), b'g') + rec(8, 0, 2, (2,), b'g') \
    + rec(9, 0, 3, (0,), b'g') + rec(10, 0, 4, (0x80001, 8), b'bcast') + rec(7, 0, 5, (), b'g') \
    + rec(11, 0, 6, (0x40003,), b'w') + rec(13, 0, 7, (0x40000000,), b'h2') \
    + rec(15, 0, 8, (4,)) + rec(1, 20, 9, (), b'pvm_bcast') + rec(1, 24, 9, (), b'pvm_mcast') \
    + rec(2, 20, 10)
seeds = {
    'flow': inp(0, [send, recv]),
    'backwards': inp(0, [send, recv.replace(struct.pack('<q', T0 + 9000 - 5000),
                                            struct.pack('<q', T0 + 1000 - 5000))]),
    'points': inp(0, [points]),
    'three': inp(0, [send, recv, points]),
    'cut-partial': inp(1, [send, recv[:-20]]),
    'cut-strict': inp(0, [send[:-20]]),
}
for name, b in seeds.items():
    open('fuzz_trace_merge/' + name, 'wb').write(b)
PY
