/*  impi_wire.h — the one table of everything IMPI puts on the wire, and the codec it drives.
 *
 *  IMPI's startup commands (AUTH, IMPI, COLL, DONE, FINI), its COLL labels (value, name,
 *  scope, element type and size, legal range) and its packet types (whether they carry
 *  data, whether flow control counts them) are each declared exactly once, in the X-macro
 *  tables below.  Enumerations, name lookup, encoding, decoding, validation and printing
 *  are all generated from those tables in impi_wire.c, so a new label or packet type is a
 *  one-line change.  Everything here is pure: no sockets, no allocation except where a
 *  function says so, and no decoder ever trusts a length it has not checked against a
 *  caller-supplied bound.  See doc/impi-protocol.md §2–4 for the protocol.
 */
#ifndef GIMPI_IMPI_WIRE_H
#define GIMPI_IMPI_WIRE_H

#include "base/gimpi_be.h"   /* the fields' byte order: gimpi_be_put32 and kin */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ the tables */

/*  Startup commands: X(name, value).  The value is the ASCII name read big-endian. */
#define IMPI_COMMANDS(X)      \
    X(AUTH, 0x41555448)       \
    X(IMPI, 0x494D5049)       \
    X(COLL, 0x434F4C4C)       \
    X(DONE, 0x444F4E45)       \
    X(FINI, 0x46494E49)

/*  COLL labels: X(name, value, scope, element type, element bytes, min, max).
 *  scope: CLIENT (one contribution per client; VERSION: one or more), HOST (NHOSTS[i]
 *  elements from client i), PROC (NPROCS[i] elements).  min/max bound every element of
 *  the integer types; -1 in XSIZE/MAXLINEAR means "the default" and is allowed. */
#define IMPI_LABELS(X)                                                              \
    X(C_VERSION,        0x1000, CLIENT, VERSION, 8,  0,          0xFFFFFFFFLL)      \
    X(C_NHOSTS,         0x1100, CLIENT, INT4,    4,  1,          0x7FFFFFFFLL)      \
    X(C_NPROCS,         0x1200, CLIENT, UINT4,   4,  1,          0x7FFFFFFFLL)      \
    X(C_DATALEN,        0x1300, CLIENT, UINT4,   4,  1,          0x7FFFFFFFLL)      \
    X(C_TAGUB,          0x1400, CLIENT, INT4,    4,  32767,      0x7FFFFFFFLL)      \
    X(C_COLL_XSIZE,     0x1500, CLIENT, INT4,    4,  -1,         0x7FFFFFFFLL)      \
    X(C_COLL_MAXLINEAR, 0x1600, CLIENT, INT4,    4,  -1,         0x7FFFFFFFLL)      \
    X(H_IPV6,           0x2000, HOST,   ADDR16,  16, 0,          0)                 \
    X(H_PORT,           0x2100, HOST,   INT4,    4,  1,          65535)             \
    X(H_NPROCS,         0x2200, HOST,   INT4,    4,  1,          0x7FFFFFFFLL)      \
    X(H_ACKMARK,        0x2300, HOST,   UINT4,   4,  1,          0x7FFFFFFFLL)      \
    X(H_HIWATER,        0x2400, HOST,   UINT4,   4,  1,          0x7FFFFFFFLL)      \
    X(P_IPV6,           0x3000, PROC,   ADDR16,  16, 0,          0)                 \
    X(P_PID,            0x3100, PROC,   INT8,    8,  INT64_MIN,  INT64_MAX)

/*  Packet types: X(name, value, carries data, counted by flow control). */
#define IMPI_PACKET_TYPES(X)        \
    X(DATA,      0, true,  true)    \
    X(DATASYNC,  1, true,  true)    \
    X(PROTOACK,  2, false, false)   \
    X(SYNCACK,   3, false, true)    \
    X(CANCEL,    4, false, true)    \
    X(CANCELYES, 5, false, true)    \
    X(CANCELNO,  6, false, true)    \
    X(FINI,      7, false, false)

/* ------------------------------------------------------------------ generated enums */

#define IMPI_X_CMD_ENUM(name, value) IMPI_CMD_##name = (int32_t)value,
enum { IMPI_COMMANDS(IMPI_X_CMD_ENUM) };
#undef IMPI_X_CMD_ENUM

#define IMPI_X_LABEL_ENUM(name, value, scope, type, size, lo, hi) IMPI_##name = value,
enum { IMPI_NO_LABEL = 0, IMPI_LABELS(IMPI_X_LABEL_ENUM) };
#undef IMPI_X_LABEL_ENUM
#define IMPI_C_PKTLEN IMPI_C_DATALEN /* the 1999 draft's name */

#define IMPI_X_LABEL_COUNT(name, value, scope, type, size, lo, hi) +1
enum { IMPI_LABEL_COUNT = 0 IMPI_LABELS(IMPI_X_LABEL_COUNT) };
#undef IMPI_X_LABEL_COUNT

#define IMPI_X_PK_ENUM(name, value, data, counted) IMPI_PK_##name = value,
enum { IMPI_PACKET_TYPES(IMPI_X_PK_ENUM) };
#undef IMPI_X_PK_ENUM

/* ------------------------------------------------------------------ constants */

enum {
    IMPI_CMD_HDR_SIZE = 8,      /* Int4 cmd + Int4 len */
    IMPI_AUTH_REPLY_SIZE = 8,   /* raw Int4 which + Int4 len, no header */
    IMPI_AUTH_KEY_SIZE = 8,     /* raw Uint8 key, no header */
    IMPI_PROC_SIZE = 24,        /* 16-byte host id + Int8 pid */
    IMPI_PACKET_SIZE = 128,     /* IMPI_Packet header */
    IMPI_MAX_CLIENTS = 32,
    IMPI_AUTH_NONE = 0,         /* method numbers; mask bit = 1 << method */
    IMPI_AUTH_KEY = 1,
    IMPI_AUTH_GIMPI = 16,       /* gimpi's own: a challenge answered under the user's key */
    IMPI_AUTH_NONCE_SIZE = 16,  /* GIMPI: raw challenge the server sends after its reply */
    IMPI_AUTH_PROOF_SIZE = 32,  /* GIMPI: raw HMAC-SHA-256 the client answers with */
    IMPI_AUTH_GIMPI_JOB = 17,   /* GIMPI, then the server hands over the job's secret */
    IMPI_AUTH_JOB_SECRET_SIZE = 32,     /* the job's secret (random, the server's) */
    IMPI_AUTH_JOB_SEALED_SIZE = 72,     /* it sealed: nonce 24, secret 32, tag 16 */
    IMPI_DEFAULT_XSIZE = 1024,
    IMPI_DEFAULT_MAXLINEAR = 4,
    IMPI_MIN_TAGUB = 32767,
};

/*  The gimpi_key_mac context of GIMPI's proof: HMAC-SHA-256 over the server's challenge
 *  under this sub-key of the user's key. */
#define IMPI_AUTH_PROOF_CONTEXT "gimpi-ip"
/*  The gimpi_key_seal context of the job's secret (GIMPI_JOB), sent after a good proof. */
#define IMPI_AUTH_JOB_CONTEXT "gimpi-js"

/*  Largest payload one client may send in one command (a COLL of 10,000 procs' addresses
 *  is 160 KB; this leaves room for a million).  Anything larger is refused before any
 *  allocation.  A server reply may be up to IMPI_MAX_CLIENTS times this. */
#define IMPI_MAX_PAYLOAD ((uint32_t)16u << 20)
#define IMPI_MAX_REPLY_PAYLOAD ((uint64_t)IMPI_MAX_PAYLOAD * IMPI_MAX_CLIENTS + 8)

typedef enum { IMPI_SCOPE_CLIENT, IMPI_SCOPE_HOST, IMPI_SCOPE_PROC } impi_scope_t;
typedef enum {
    IMPI_ELEM_INT4, IMPI_ELEM_UINT4, IMPI_ELEM_INT8, IMPI_ELEM_ADDR16, IMPI_ELEM_VERSION
} impi_elem_t;

/*  One row of the label table. */
typedef struct {
    int32_t value;
    const char *name;           /* "IMPI_C_NHOSTS" */
    impi_scope_t scope;
    impi_elem_t type;
    size_t elem_size;
    int64_t min, max;           /* bounds of integer elements */
} impi_label_info_t;

/*  One row of the packet-type table. */
typedef struct {
    uint32_t value;
    const char *name;           /* "IMPI_PK_DATA" */
    bool has_data;              /* DATA, DATASYNC: pk_len bytes follow the header */
    bool counted;               /* flow control counts it (all but PROTOACK and FINI) */
} impi_packet_info_t;

/* ------------------------------------------------------------------ error codes */

typedef enum {
    IMPI_OK = 0,
    IMPI_ERR_SHORT = -1,        /* not enough bytes yet (not an error for streams) */
    IMPI_ERR_COMMAND = -2,      /* unknown command code */
    IMPI_ERR_LENGTH = -3,       /* a length field out of range or inconsistent */
    IMPI_ERR_LABEL = -4,        /* label unknown where it must be known, or 0 */
    IMPI_ERR_VALUE = -5,        /* an element outside its legal range */
    IMPI_ERR_MASK = -6,         /* client mask inconsistent with payload or table */
    IMPI_ERR_PACKET = -7,       /* unknown packet type or bad packet field */
    IMPI_ERR_VERSION = -8,      /* version list not ascending or without 0.0 */
} impi_err_t;

/*  Text for an impi_err_t. */
const char *impi_strerror(int err);

/* ------------------------------------------------------------------ table lookups */

/*  Row of a label, or NULL when the label is not in the table. */
const impi_label_info_t *impi_label_info(int32_t label);
/*  Row i (0 <= i < IMPI_LABEL_COUNT) of the label table, in ascending label order. */
const impi_label_info_t *impi_label_at(int i);
/*  Name of a label ("IMPI_H_PORT"), or "label 0x...." for unknown ones (static buffer-free:
 *  unknown labels get a generic name). */
const char *impi_label_name(int32_t label);
/*  Name of a command ("AUTH"), or NULL when unknown. */
const char *impi_cmd_name(int32_t cmd);
/*  Row of a packet type, or NULL when unknown. */
const impi_packet_info_t *impi_packet_info(uint32_t type);
/*  Name of a packet type ("IMPI_PK_SYNCACK"), or "IMPI_PK_?" when unknown. */
const char *impi_packet_name(uint32_t type);

/* ------------------------------------------------------------------ command framing */

typedef struct {
    int32_t cmd;
    uint32_t len;               /* payload bytes following the 8-byte header */
} impi_cmd_t;

/*  Writes the 8-byte header. */
void impi_cmd_encode(uint8_t out[IMPI_CMD_HDR_SIZE], int32_t cmd, uint32_t len);

/*  Decodes and validates an 8-byte header: the command must be known and len must suit it
 *  (AUTH 4, IMPI 4, COLL 4..max_payload (client) — a server reply needs >= 8, checked by
 *  impi_coll_reply_decode —, DONE and FINI up to max_payload, payload discarded).  len is
 *  compared with max_payload before anything is allocated.  Returns IMPI_OK or an error. */
int impi_cmd_decode(const uint8_t in[IMPI_CMD_HDR_SIZE], uint64_t max_payload, impi_cmd_t *cmd);

/* ------------------------------------------------------------------ AUTH */

/*  Raw 8-byte server reply to AUTH: Int4 chosen method, Int4 len (bytes the client must send
 *  next: 0 for NONE, 8 for KEY, 32 for GIMPI).  With GIMPI (a method of gimpi's own, never
 *  chosen for a client that does not offer it) IMPI_AUTH_NONCE_SIZE raw random bytes follow
 *  the reply, and the client answers with the HMAC that proves it holds the user's key.
 *  GIMPI_JOB (17) is GIMPI and then, once the proof is good, the server sends the job's
 *  secret sealed under the user's key (IMPI_AUTH_JOB_SEALED_SIZE raw bytes): every client
 *  of the job gets the same secret, which no other job of the user knows (gimpirun keys
 *  its tid reservation with it).  A server that does not know 17 chooses 16. */
void impi_auth_reply_encode(uint8_t out[IMPI_AUTH_REPLY_SIZE], int32_t which, int32_t len);
/*  Decodes it; a method other than NONE, KEY, GIMPI and GIMPI_JOB is IMPI_ERR_VALUE. */
int impi_auth_reply_decode(const uint8_t in[IMPI_AUTH_REPLY_SIZE], int32_t *which, int32_t *len);
/*  Chooses the strongest method enabled on both sides (GIMPI_JOB over GIMPI over KEY over
 *  NONE; a server that enables GIMPI enables GIMPI_JOB); -1 when none. */
int impi_auth_choose(uint32_t client_mask, uint32_t server_mask);
/*  The raw 8-byte key (Uint8, big-endian, no header) a client sends after a KEY reply. */
void impi_auth_key_encode(uint8_t out[IMPI_AUTH_KEY_SIZE], uint64_t key);
uint64_t impi_auth_key_decode(const uint8_t in[IMPI_AUTH_KEY_SIZE]);
/*  Parses the text of a KEY (IMPI_AUTH_KEY): a decimal integer, signed (what LAM's atoll()
 *  and the IMPI draft read: -2^63 .. 2^63-1) or unsigned (0 .. 2^64-1), taken as its 64 bits
 *  of two's complement.  No sign but one leading '-', no space, nothing after the digits.
 *  Returns 0, or -1 when the text is not such a number. */
int impi_auth_key_parse(const char *text, uint64_t *key);
/*  Writes the signed decimal form of a KEY (what LAM's atoll() reads back to the same 64
 *  bits) into buf, which needs 21 bytes. */
const char *impi_auth_key_format(uint64_t key, char buf[21]);

/* ------------------------------------------------------------------ Int4 commands */

/*  AUTH (mask), IMPI (client rank, or the server's client count) carry one Int4. */
enum { IMPI_CMD_INT4_SIZE = IMPI_CMD_HDR_SIZE + 4 };
/*  Writes such a command: header {cmd, 4} and the value, 12 bytes. */
void impi_cmd_int4_encode(uint8_t out[IMPI_CMD_INT4_SIZE], int32_t cmd, int32_t value);
/*  Reads the Int4 payload of a command impi_cmd_decode accepted with len 4. */
int32_t impi_cmd_int4_decode(const uint8_t payload[4]);

/* ------------------------------------------------------------------ IMPI_Proc */

typedef struct {
    uint8_t hostid[16];
    int64_t pid;
} impi_proc_t;

void impi_proc_encode(uint8_t out[IMPI_PROC_SIZE], const impi_proc_t *proc);
void impi_proc_decode(const uint8_t in[IMPI_PROC_SIZE], impi_proc_t *proc);
bool impi_proc_equal(const impi_proc_t *a, const impi_proc_t *b);
/*  Writes an IPv4 address (host order) as the IPv4-compatible 16-byte form LAM uses. */
void impi_addr16_from_ipv4(uint8_t out[16], uint32_t ipv4);
/*  The IPv4 address (host order) in the last 4 bytes of a 16-byte address. */
uint32_t impi_addr16_ipv4(const uint8_t addr[16]);
/*  Formats a 16-byte address: dotted IPv4 for the compatible and mapped forms, else hex. */
const char *impi_addr16_format(const uint8_t addr[16], char *buf, size_t size);

/* ------------------------------------------------------------------ COLL */

/*  A client's COLL payload: the label and the element bytes after it.  `data` points into
 *  the caller's buffer. */
typedef struct {
    int32_t label;
    const uint8_t *data;
    size_t len;
} impi_coll_t;

/*  Decodes a client's COLL payload (len >= 4, label != 0).  Unknown labels are accepted
 *  here (impi-server then refuses those not in the table). */
int impi_coll_decode(const uint8_t *payload, size_t len, impi_coll_t *coll);

/*  Checks a client's contribution against the table: element size divides len, counts
 *  (client scope: exactly 1, VERSION: >= 1 ascending from 0.0; host/proc scope: `count`
 *  elements when count >= 0, any multiple when count < 0) and ranges.  Unknown labels pass. */
int impi_coll_validate(int32_t label, const uint8_t *data, size_t len, long count);

/*  A server's COLL reply payload: label, client mask, concatenated data. */
typedef struct {
    int32_t label;
    uint32_t mask;
    const uint8_t *data;
    size_t len;
} impi_coll_reply_t;

/*  Decodes a server's COLL reply payload (len >= 8). */
int impi_coll_reply_decode(const uint8_t *payload, size_t len, impi_coll_reply_t *reply);

/*  Writes the 16-byte header of a server reply (COLL cmd, len = 8 + data_len, label, mask);
 *  the concatenated data follows it on the wire. */
void impi_coll_reply_header(uint8_t out[16], int32_t label, uint32_t mask, uint32_t data_len);
enum { IMPI_COLL_REPLY_HDR_SIZE = 16 };  /* cmd, len, label, mask */

/*  A contributing client's slice of a reply. */
typedef struct {
    const uint8_t *data;
    size_t len;
    size_t count;               /* elements in it */
} impi_slice_t;

/*  Splits a reply into per-client slices using the table's element size and `counts`
 *  (elements expected from client i; NULL for client-scope labels, where VERSION lists are
 *  split at each {0,0}).  slices[i] is zeroed for clients not in the mask.  Fails when the
 *  mask names clients >= nclients or the lengths do not add up. */
int impi_coll_reply_split(const impi_coll_reply_t *reply, int nclients,
                          const long *counts, impi_slice_t *slices);

/*  Reads element i of a slice as an integer (INT4/UINT4/INT8 labels). */
int64_t impi_elem_int(const impi_label_info_t *info, const uint8_t *data, size_t i);

/*  Formats one element of a label ("8000", "0.1", "192.0.2.2"). */
const char *impi_elem_format(const impi_label_info_t *info, const uint8_t *elem,
                             char *buf, size_t size);

/* ------------------------------------------------------------------ IMPI_Packet */

typedef struct {
    uint32_t type;
    uint32_t len;               /* pk_len */
    impi_proc_t src;
    impi_proc_t dest;
    uint64_t srqid;
    uint64_t drqid;
    uint64_t msglen;
    int32_t lsrank;
    int32_t tag;
    uint64_t cid;
    uint64_t seqnum;
    int64_t count;
    uint64_t dtype;
    uint64_t reserved;
} impi_packet_t;

void impi_packet_encode(uint8_t out[IMPI_PACKET_SIZE], const impi_packet_t *pk);

/*  Decodes and validates a 128-byte header.  The type must be known.  For data packets
 *  pk_len must be <= max_data (the negotiated packet length) and <= pk_msglen; for control
 *  packets pk_len is ignored (LAM puts 128 there).  Returns IMPI_OK or IMPI_ERR_PACKET /
 *  IMPI_ERR_LENGTH. */
int impi_packet_decode(const uint8_t in[IMPI_PACKET_SIZE], uint32_t max_data, impi_packet_t *pk);

/*  Data bytes that follow this header on the wire: pk_len for DATA/DATASYNC, else 0. */
uint32_t impi_packet_data_len(const impi_packet_t *pk);

/*  One-line description of a packet ("IMPI_PK_DATA len=8 msglen=8 tag=3 cid=0 ..."). */
const char *impi_packet_format(const impi_packet_t *pk, char *buf, size_t size);

/* ------------------------------------------------------------------ printing */

/*  Prints a command header and, for COLL, its label and decoded elements. */
void impi_cmd_print(FILE *out, const char *prefix, const impi_cmd_t *cmd,
                    const uint8_t *payload, size_t len);

#endif
