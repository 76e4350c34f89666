/*  msg_dynhost.h — the introduction of dynamic hosts (the codec lives in msg_dynhost.c,
 *  beside the engine's dynamic-host set-up).
 *
 *  A task that is not in the static tables (a spawned child, a task of another job)
 *  reaches a task through its listening socket with a gimpi introduction instead of the
 *  4-byte host rank: a 52-byte record starting with GIMPI_INTRO_MARKER, a value no host
 *  rank can take (host ranks are below 2^31).  The caller sends
 *      marker, version, its tid, the tid it wants, its pktlen, ackmark, hiwater, its proc
 *  (words big endian, the proc as IMPI's 24-byte IMPI_Proc); the callee answers with the
 *  same layout, the version word replaced by a status (GIMPI_INTRO_OK or why not) and the
 *  two tids swapped.  Nobody sends packets before the answer said OK.  See
 *  doc/data-plane.md, "Dynamic hosts". */
#ifndef GIMPI_MSG_DYNHOST_H
#define GIMPI_MSG_DYNHOST_H

#include "impi/impi_wire.h"

#include <stdint.h>

#define GIMPI_INTRO_MARKER 0xFF474448u          /* "\xffGDH" */
enum {
    GIMPI_INTRO_VERSION = 1,
    GIMPI_INTRO_SIZE = 28 + IMPI_PROC_SIZE,
};
/*  Answer statuses. */
enum {
    GIMPI_INTRO_OK = 0,
    GIMPI_INTRO_BADVERSION = 1,     /* unknown introduction version */
    GIMPI_INTRO_WRONGTID = 2,       /* the callee is not the task asked for */
    GIMPI_INTRO_DUP = 3,            /* already connected (or a static peer) */
    GIMPI_INTRO_RACE = 4,           /* both called: the callee's own call (higher tid) wins */
    GIMPI_INTRO_LEAVING = 5,        /* the callee is finishing, or knows the caller gone */
    GIMPI_INTRO_BADPARAM = 6,       /* bad tid or flow-control parameters */
};

typedef struct {
    uint32_t word;              /* version (introduction) or status (answer) */
    int tid;                    /* the sender's tid */
    int target;                 /* the tid the sender talks to */
    uint32_t pktlen, ackmark, hiwater;
    impi_proc_t proc;           /* the sender's IMPI proc */
} gimpi_intro_t;

/*  Encodes an introduction or answer. */
void gimpi_intro_encode(uint8_t out[GIMPI_INTRO_SIZE], const gimpi_intro_t *in);
/*  Decodes one; -1 when the marker is wrong. */
int gimpi_intro_decode(const uint8_t in[GIMPI_INTRO_SIZE], gimpi_intro_t *out);
/*  Text of an answer status. */
const char *gimpi_intro_strstatus(uint32_t status);

#endif
