/*  gimpi_tev.h — the on-disk format of a task's trace: one file per task, a fixed header
 *  then records, written by the task's recorder (gimpi_trace) and read by the merger that
 *  turns a job's files into Chrome trace-event JSON (gimpi-trace).  Both sides include
 *  this header and nothing else of each other: it is the whole contract.  Integers are in
 *  the writing host's byte order (the header's magic tells a reader which), times are
 *  nanoseconds of CLOCK_REALTIME on the writing host; the header's offset maps them onto
 *  the job's reference clock (the launching host's).
 */
#ifndef GIMPI_TEV_H
#define GIMPI_TEV_H

#include <stdint.h>

#define GIMPI_TEV_MAGIC   0x56455447u       /* "GTEV" in the writer's byte order */
#define GIMPI_TEV_VERSION 1u
#define GIMPI_TEV_SUFFIX  ".gtev"           /* DIR/<tid in hex>.gtev */

/*  The file header (written once, at the file's start; 256 bytes). */
typedef struct {
    uint32_t magic;           /* GIMPI_TEV_MAGIC */
    uint32_t version;         /* GIMPI_TEV_VERSION */
    int32_t  tid;             /* the task's PVM tid */
    int32_t  pid;             /* its process id on its host */
    int64_t  offset_ns;       /* reference clock = local CLOCK_REALTIME + offset_ns */
    int64_t  offset_err_ns;   /* half the round trip the offset was measured over (0: same host) */
    int64_t  start_ns;        /* local CLOCK_REALTIME when recording began */
    char     host[64];        /* the host's name as the job knows it, NUL-terminated */
    char     program[64];     /* the task's program (basename), NUL-terminated */
    uint8_t  pad[88];         /* zero; room for later fields */
} gimpi_tev_file_t;

/*  What a record says.  CALL_BEGIN/CALL_END bracket one library call (its number in `ev`
 *  is pvmtev.h's TEV_ event number of that call, its name in the string); the others are
 *  points in time inside or between calls. */
typedef enum {
    GIMPI_TEV_CALL_BEGIN = 1,   /* i: the call's int arguments as PVM records them */
    GIMPI_TEV_CALL_END   = 2,   /* i[0]: the return value */
    GIMPI_TEV_SEND       = 3,   /* a message left: i = dst, tag, ctx, bytes, seq */
    GIMPI_TEV_RECV       = 4,   /* a message was taken by the task: i = src, tag, ctx, bytes, seq */
    GIMPI_TEV_QUEUE      = 5,   /* i[0]: messages arrived and not yet taken (a counter) */
    GIMPI_TEV_JOIN       = 6,   /* s: group; i[0]: instance */
    GIMPI_TEV_LEAVE      = 7,   /* s: group */
    GIMPI_TEV_BARRIER_IN = 8,   /* s: group; i[0]: count */
    GIMPI_TEV_BARRIER_OUT= 9,   /* s: group; i[0]: result */
    GIMPI_TEV_COLL_SEND  = 10,  /* a collective's own transfer: s: op name; i = dst, bytes */
    GIMPI_TEV_SPAWN      = 11,  /* i[0]: child tid; s: program */
    GIMPI_TEV_EXIT       = 12,  /* the task ends: i[0] status */
    GIMPI_TEV_HOST_ADD   = 13,  /* s: host name; i[0]: dtid */
    GIMPI_TEV_HOST_DEL   = 14,  /* s: host name; i[0]: dtid */
    GIMPI_TEV_LOST       = 15,  /* i[0]: records the ring dropped before this one */
} gimpi_tev_kind_t;

enum { GIMPI_TEV_INTS = 6 };

/*  One record: this fixed part, then `slen` bytes of string (no NUL), padded with zeros
 *  to a multiple of 8.  `len` is the whole record's size in bytes, a multiple of 8.
 *  Messages are matched sender to receiver by (src, dst, ctx, seq): `seq` counts the
 *  messages a task has sent to one destination, from 1, in the order they left. */
typedef struct {
    uint32_t len;             /* whole record, header + padded string */
    uint16_t kind;            /* gimpi_tev_kind_t */
    uint16_t ev;              /* pvmtev.h event number for CALL_*, else 0 */
    int64_t  t_ns;            /* local CLOCK_REALTIME */
    int32_t  i[GIMPI_TEV_INTS];
    uint16_t slen;            /* string bytes that follow */
    uint16_t flags;           /* 0 */
    uint32_t pad;             /* 0 */
} gimpi_tev_rec_t;

#endif
