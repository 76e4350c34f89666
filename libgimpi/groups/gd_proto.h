/*  gd_proto.h — the one table of gimpi's group-control protocol (task <-> groupd over
 *  ZeroMQ), and the codec it drives.
 *
 *  Every request, its reply and every published event is a multipart ZeroMQ message whose
 *  frames are declared exactly once, in the X-macro tables below: a command's row names
 *  its code and the layout of its request frames and of its reply's extra frames, as a
 *  string of frame-type letters.  Decoding, validation, encoding and printing are all
 *  generated from those rows in gd_proto.c, so a new command is a one-line change.  The
 *  decoder is pure (frames in, struct out, no allocation) and trusts no length: it is the
 *  function the fuzzer drives.  The wire format is written up in doc/groupd-protocol.md.
 */
#ifndef GIMPI_GD_PROTO_H
#define GIMPI_GD_PROTO_H

#include "base/gimpi_be.h"   /* the fields' byte order: gimpi_be_put32 and kin */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ the tables */

/*  Frame types (one letter each, used in the layout strings):
 *    i  Int4, big-endian, 4 bytes           q  Uint8, big-endian, 8 bytes
 *    n  group name: 0..GD_MAX_NAME bytes, no NUL ("" is PvmNullGroup, answered by groupd)
 *    t  short text: 0..GD_MAX_TEXT bytes, no NUL (host names, endpoints)
 *    p  IMPI_Proc: 24 bytes (16-byte host id + Int8 pid)
 *    a  16-byte address (IPv6 or IPv4-compatible)
 *    b  opaque bytes: 0..GD_MAX_BLOB bytes (snapshots, group records)
 *    k  a reserved block's token: GD_TOKEN_SIZE random bytes
 *    *  (last only) any number (0..GD_MAX_FRAMES) more frames of type b */

/*  Requests: X(name, code, request frames, reply extra frames).  Every reply is
 *  [header][i status][q version] followed by the extra frames (only when status >= 0). */
#define GD_COMMANDS(X)                                                                \
    X(HELLO,      0x01, "*",     "ti")  /* [Int4 highest term seen] -> PUB endpoint, term */ \
    X(REGISTER,   0x02, "paiit", "")    /* proc, addr, port, OS pid, host -> tid */   \
    X(UNREGISTER, 0x03, "",      "")    /* leave every group, forget the task */      \
    X(JOIN,       0x04, "n",     "")    /* -> instance */                             \
    X(LEAVE,      0x05, "n",     "")    /* -> 0 */                                    \
    X(GETTID,     0x06, "ni",    "")    /* group, instance -> tid */                  \
    X(GETINST,    0x07, "ni",    "")    /* group, tid -> instance */                  \
    X(GSIZE,      0x08, "n",     "")    /* -> member count */                         \
    X(BARRIER,    0x09, "ni",    "")    /* group, count -> 0 at release */            \
    X(FREEZE,     0x0A, "ni",    "")    /* group, size -> size at completion */       \
    X(SNAPSHOT,   0x0B, "n",     "b")   /* -> size; members (inst,tid) pairs */       \
    X(STAT,       0x0C, "n",     "*")   /* "" = all groups; one record per group */   \
    X(PING,       0x0D, "",      "")                                                \
    X(LOOKUP,     0x0E, "i",     "paiit") /* tid -> its REGISTER data (0 or NoTask) */ \
    X(REGISTER_TID, 0x0F, "paiitik", "") /* REGISTER + reserved tid + its block's token */ \
    X(RESERVE,    0x10, "ti",    "k")   /* key, n -> base (tids base+1 .. base+n), token */ \
    X(HOSTS,      0x11, "",      "b")   /* -> number of hosts; the VM's host table */ \
    X(HOSTS_SET,  0x12, "ibb",   "")    /* hosts, table, launcher token (0 or 16 bytes) */ \
    X(TASKS,      0x13, "t",     "b")   /* host ("" = all) -> count; task records */ \
    X(TASKINFO,   0x14, "it",    "")    /* parent tid, program name of the caller's task */ \
    X(VMREQ,      0x15, "b",     "b")   /* request for the manager -> its status, answer */ \
    X(VMWAIT,     0x16, "",      "ib")  /* manager: -> 0; token, next request (deferred) */ \
    X(VMREP,      0x17, "iib",   "")    /* manager: token, status, answer of a VMREQ */ \
    X(TASK_EXIT,  0x18, "ii",    "")    /* manager: tid, exit status: the task is gone */ \
    X(HALT,       0x19, "",      "")    /* -> 0, then groupd exits (the console's halt) */ \
    X(BARRIER_NOTE, 0x1A, "ni",  "")    /* group, count (0: done): a data-plane barrier */ \
    X(MBOX_PUT,   0x1B, "niiib", "")    /* name, req, flags, encoding, entry -> index */ \
    X(MBOX_GET,   0x1C, "nii",   "ib")  /* name, index, flags -> index; encoding, entry */ \
    X(MBOX_DEL,   0x1D, "nii",   "")    /* name, index, flags -> index */             \
    X(MBOX_LIST,  0x1E, "n",     "b")   /* pattern -> classes; their records */ \
    X(MBOX_PUTQ,  0x1F, "niiib", "")    /* MBOX_PUT whose answer the sender knows: none */ \
    X(SPAWN_EXIT, 0x20, "ik",    "")    /* spawner: tid, its block's token: died unregistered */ \
    X(TASK_STATUS, 0x21, "itiii", "")   /* own tid, call ("": running), ms, queued, peer */ \
    X(STATUSES,   0x22, "",      "b")   /* -> count; the blocked tasks' records */ \
    X(FOLLOW,     0x23, "i",     "iqib") /* standby: term -> a stream of replies: term, \
                                           offset after, 1 image | 0 records, bytes */ \
    X(FOLLOW_ACK, 0x24, "q",     "")    /* standby: bytes it holds (also its heartbeat) */ \
    X(FENCE,      0x25, "i",     "")    /* a newer primary's term: an older one exits */

/*  Events on the PUB socket: X(name, code).  Frames: [topic "G"+name][header]
 *  [q previous version][q version][i instance][i tid][i argument].  See the doc.
 *  EV_TASK_EXIT goes on topic "T" + the tid (Int4, big-endian), the host events on topic
 *  "H" (tid: the host's dtid, instance: its place among the argument hosts that one change
 *  of the host table adds or removes); their versions are 0.  A MARK answers a
 *  subscription on every topic. */
#define GD_EVENTS(X)          \
    X(EV_JOIN,   0x41)        \
    X(EV_LEAVE,  0x42)        \
    X(EV_EXIT,   0x43)        \
    X(EV_FREEZE, 0x44)        \
    X(EV_DEAD,   0x45)        \
    X(EV_MARK,   0x46)        \
    X(EV_TASK_EXIT, 0x47)     \
    X(EV_HOST_ADD,  0x48)     \
    X(EV_HOST_DEL,  0x49)
#define GD_EVENT_LAYOUT "qqiii"

/* ------------------------------------------------------------------ generated enums */

#define GD_X_CMD_ENUM(name, code, req, rep) GD_##name = code,
enum { GD_COMMANDS(GD_X_CMD_ENUM) };
#undef GD_X_CMD_ENUM
#define GD_X_EV_ENUM(name, code) GD_##name = code,
enum { GD_EVENTS(GD_X_EV_ENUM) };
#undef GD_X_EV_ENUM

/* ------------------------------------------------------------------ constants */

enum {
    GD_VERSION = 2,             /* protocol version carried by every header (2: tokens) */
    GD_HDR_SIZE = 8,            /* 'G' 'D' version kind + Uint4 request id */
    GD_REPLY_FLAG = 0x80,       /* reply kind = command code | this */
    GD_MAX_NAME = 4096,         /* longest group name, bytes */
    GD_MAX_TEXT = 255,          /* longest text frame */
    GD_MAX_ENDPOINT = 512,      /* room for an endpoint (gimpi_groups_new takes 503 bytes) */
    GD_MAX_BLOB = 1 << 24,      /* longest opaque frame */
    GD_MAX_FRAMES = 16,         /* frames of a decoded message (fixed part) */
    GD_TOKEN_SIZE = 16,         /* a reserved block's token (random) */
    GD_BAD_KIND = 0xFF,         /* reply kind for a request whose header was unreadable */
    GD_VM_MAX_TABLE = 1 << 20,  /* longest host table (HOSTS_SET), bytes */
    GD_VM_MAX_PAYLOAD = 1 << 16, /* longest VMREQ / VMREP payload, bytes */
    GD_VM_MAX_PENDING = 1024,   /* VMREQs queued or handed to the manager, in all */
    GD_VM_MAX_PER_CONN = 16,    /* VMREQs pending per requesting connection */
    GD_MBOX_MAX_ENTRY = 1 << 16, /* longest message-box entry (MBOX_PUT), bytes: groupd's
                                    frame limit (GD_SOCK_GROUPD_MAXMSGSIZE) by default */
    GD_TASKREC_MIN = 24,
    GD_SNAP_HEAD = 16,          /* SNAPSHOT blob: frozen, dead, the daemon counter; pairs */        /* smallest task record of a TASKS blob, bytes */
};

/*  Decoder results (never sent on the wire; groupd turns them into error replies). */
typedef enum {
    GD_OK = 0,
    GD_ERR_HEADER = -1,         /* first frame not a gimpi header */
    GD_ERR_VERSION = -2,        /* header of another protocol version */
    GD_ERR_COMMAND = -3,        /* unknown command or event */
    GD_ERR_FRAMES = -4,         /* too few or too many frames */
    GD_ERR_SIZE = -5,           /* a frame of the wrong size (or oversize) */
    GD_ERR_TEXT = -6,           /* a NUL inside a name or text */
} gd_err_t;

const char *gd_strerror(int err);

/* ------------------------------------------------------------------ messages */

/*  One frame as seen by the codec: bytes and length (not owned). */
typedef struct {
    const uint8_t *data;
    size_t len;
} gd_frame_t;

/*  One decoded frame value. */
typedef struct {
    char type;                  /* the layout letter */
    int32_t i;                  /* i */
    uint64_t q;                 /* q */
    const uint8_t *data;        /* n t p a b: points into the caller's frame */
    size_t len;
} gd_value_t;

/*  A decoded request, reply or event. */
typedef struct {
    uint8_t kind;               /* command code, code|GD_REPLY_FLAG, or event code */
    uint8_t version;
    uint32_t reqid;
    int nvalues;
    gd_value_t values[GD_MAX_FRAMES];
    int nextra;                 /* frames matched by '*' (not stored; see extra_first) */
    int extra_first;            /* index in the frame array of the first '*' frame */
} gd_msg_t;

/*  One row of the command table. */
typedef struct {
    uint8_t code;
    const char *name;           /* "JOIN" */
    const char *request;        /* layout of the request frames after the header */
    const char *reply;          /* layout of the reply's extra frames */
} gd_command_info_t;

const gd_command_info_t *gd_command_info(uint8_t code);
/*  Name of a command or event ("JOIN", "EV_JOIN"), or "?" when unknown. */
const char *gd_kind_name(uint8_t kind);
/*  Name of an event (row of the event table), or NULL. */
const char *gd_event_name(uint8_t code);

/* ------------------------------------------------------------------ codec */

/*  Writes a header frame. */
void gd_header_encode(uint8_t out[GD_HDR_SIZE], uint8_t kind, uint32_t reqid);

/*  Reads a header frame.  On GD_ERR_VERSION/GD_ERR_COMMAND msg->kind and msg->reqid are
 *  still filled in, so that an error reply can echo them. */
int gd_header_decode(const gd_frame_t *frame, gd_msg_t *msg);

/*  Checks frames against a layout ("ni", "*") and fills values[].  Pure. */
int gd_values_decode(const char *layout, const gd_frame_t *frames, int nframes, gd_msg_t *msg);

/*  Decodes and validates a whole request (frames[0] is the header, no routing frames).
 *  The command must be known and the frames must match its request layout exactly. */
int gd_request_decode(const gd_frame_t *frames, int nframes, gd_msg_t *msg);

/*  Decodes a reply to a request of command `cmd` ([header][i status][q version] + extras
 *  when status >= 0). */
int gd_reply_decode(uint8_t cmd, const gd_frame_t *frames, int nframes, gd_msg_t *msg);

/*  True when topic (len bytes) is an event topic: "G" + a group name, "T" + an Int4 tid
 *  (big-endian), or "H". */
bool gd_event_topic_ok(const uint8_t *topic, size_t len);

/*  Decodes an event (frames[0] is the topic). */
int gd_event_decode(const gd_frame_t *frames, int nframes, gd_msg_t *msg);

/*  Encodes values per layout into out (frames point into `buf`, which must hold
 *  8 bytes per i/q value; n t p a b values point at the caller's data).  Returns the
 *  number of frames or a gd_err_t when a value does not fit its type. */
int gd_values_encode(const char *layout, const gd_value_t *values, int nvalues,
                     uint8_t *buf, gd_frame_t *out);

/*  One-line description of a decoded message ("JOIN #7 'g1'", "reply JOIN #7 status=2"). */
const char *gd_msg_format(const gd_msg_t *msg, char *buf, size_t size);

/* ------------------------------------------------------------------ group records */

/*  What STAT returns about one group, one frame per group (Uint2-prefixed strings, Int4
 *  numbers): name, size, frozen size (0 = dynamic), dead (frozen and lost a member),
 *  version, barrier count/arrived, freeze target/arrived, members (inst, tid, OS pid,
 *  host), barrier waiters (tids), freeze waiters (tids), then the data-plane barrier
 *  waiters (BARRIER_NOTE): their number, then per waiter tid, count, ms waited so far. */
typedef struct {
    int32_t tid, count, ms;
} gd_dpwait_t;

typedef struct {
    int32_t inst, tid, ospid;
    char host[GD_MAX_TEXT + 1];
} gd_member_t;

typedef struct {
    char *name;
    int32_t size, frozen, dead;
    uint64_t version;
    int32_t bar_count, bar_arrived, frz_count, frz_arrived;
    int32_t nmembers, nbar_waiters, nfrz_waiters;
    gd_member_t *members;
    int32_t *bar_waiters, *frz_waiters;
    int32_t ndp;                /* tasks waiting in a barrier on the data plane */
    gd_dpwait_t *dp;
} gd_groupstat_t;

/*  Encodes a record into a malloc'ed buffer; returns its length (0 on failure). */
size_t gd_groupstat_encode(const gd_groupstat_t *st, uint8_t **out);
/*  Decodes a record, allocating its arrays; 0 or a gd_err_t.  Free with _clear. */
int gd_groupstat_decode(const uint8_t *data, size_t len, gd_groupstat_t *st);
void gd_groupstat_clear(gd_groupstat_t *st);

/* ------------------------------------------------------------------ task records */

/*  What TASKS returns about one registered task, one record after the other in one blob:
 *  Int4 tid, Int4 parent tid (0: none), Int4 OS pid, Int4 flags (0), then the host text
 *  and the program name, each as Int4 length + bytes (at most GD_MAX_TEXT, no NUL). */
typedef struct {
    int32_t tid, ptid, ospid, flags;
    char host[GD_MAX_TEXT + 1];
    char name[GD_MAX_TEXT + 1];
} gd_vmtask_t;

/*  Encodes n records into a malloc'ed buffer (*out; texts longer than GD_MAX_TEXT are cut);
 *  returns its length, 0 on failure (*out NULL) or when n is 0 (*out a 1-byte buffer). */
size_t gd_tasks_encode(const gd_vmtask_t *tasks, int n, uint8_t **out);
/*  Decodes a TASKS blob into a malloc'ed array (*out, *n records; at least one element is
 *  allocated).  Trusts no length: the record count is bounded by the bytes present before
 *  anything is allocated.  0, or GD_ERR_SIZE / GD_ERR_TEXT (*out NULL, *n 0). */
int gd_tasks_decode(const uint8_t *data, size_t len, gd_vmtask_t **out, int *n);

/* ------------------------------------------------------------------ live status records */

/*  What a task blocked in a call publishes (TASK_STATUS, only once it has waited
 *  GIMPI_STATUS_AFTER), and what STATUSES returns about each such task, one record after
 *  the other in one blob: Int4 tid, Int4 ms blocked so far (at groupd's clock), Int4
 *  messages queued for it (arrived, not taken; -1: not known), Int4 the peer it waits for (0: none or
 *  any), Int4 that peer's state (GD_PEER_*), then the call as Int4 length + text (1 ..
 *  GD_MAX_TEXT bytes, no NUL: "pvm_recv(t40005, tag 7)"). */
enum {
    GD_PEER_NONE = 0,           /* no peer named (or any) */
    GD_PEER_RUNNING = 1,        /* registered with groupd */
    GD_PEER_EXITED = 2,         /* was registered and is gone */
    GD_PEER_UNKNOWN = 3,        /* never seen by this groupd (or forgotten) */
    GD_STATUSREC_MIN = 24,      /* smallest record of a STATUSES blob, bytes */
};

typedef struct {
    int32_t tid, ms, queued, peer, peer_state;
    char call[GD_MAX_TEXT + 1];
} gd_status_rec_t;

/*  Encodes n records into a malloc'ed buffer (*out); returns its length, 0 on failure
 *  (*out NULL) or when n is 0 (*out a 1-byte buffer), as gd_tasks_encode. */
size_t gd_statuses_encode(const gd_status_rec_t *recs, int n, uint8_t **out);
/*  Decodes a STATUSES blob into a malloc'ed array (*out, *n records; at least one element
 *  allocated), trusting no length.  0, or GD_ERR_SIZE / GD_ERR_TEXT (*out NULL, *n 0). */
int gd_statuses_decode(const uint8_t *data, size_t len, gd_status_rec_t **out, int *n);

/* ------------------------------------------------------------------ ZeroMQ helpers */

/*  Sends frames (prefixed by `route` frames, e.g. a ROUTER identity) as one multipart
 *  message.  Returns 0 or -1 (errno from libzmq). */
int gd_send_frames(void *socket, const gd_frame_t *route, int nroute,
                   const gd_frame_t *frames, int nframes, int flags);

/*  A received multipart message: the libzmq parts, kept alive while the frames are used. */
typedef struct {
    int nparts;
    int cap;
    void *parts;                /* zmq_msg_t array */
    gd_frame_t *frames;
    bool truncated;             /* more parts than the limit: the rest dropped */
} gd_multipart_t;

/*  Receives one whole multipart message (flags: 0 or ZMQ_DONTWAIT).  0 or -1.  Parts
 *  beyond GD_MAX_FRAMES + 64 (or `limit`) are read and dropped, and `truncated` is set. */
int gd_multipart_recv(void *socket, gd_multipart_t *mp, int flags);
int gd_multipart_recv_max(void *socket, gd_multipart_t *mp, int flags, int limit);
void gd_multipart_close(gd_multipart_t *mp);
/*  Source fd of the message (ZMQ_SRCFD of its first part that has one), -1 when unknown. */
int gd_multipart_srcfd(gd_multipart_t *mp);

/*  Per-user default endpoint ("ipc://$XDG_RUNTIME_DIR/gimpi/groupd" or
 *  "ipc:///tmp/gimpi-UID/groupd") in the private runtime directory, which is made (0700)
 *  or checked (gimpi_rundir).  NULL on failure, with the reason in err (may be NULL). */
const char *gd_default_endpoint(char *buf, size_t size, char *err, size_t errsize);

#endif
