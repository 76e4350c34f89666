/*  msg_dynhost.h — the introduction of dynamic hosts: its records and their codec (which
 *  lives in msg_dynhost.c, beside the engine's dynamic-host set-up).
 *
 *  A task that is not in the static tables (a spawned child, a task of another job)
 *  reaches a task through its listening socket with a gimpi introduction instead of the
 *  4-byte host rank of IMPI's meeting.  Every record starts with GIMPI_INTRO_MARKER, a
 *  value no host rank can take (host ranks are below 2^31), so a listener tells the two
 *  apart from the first word, and IMPI's own bytes are untouched.  The introduction is a
 *  challenge-response under the job's key (base/gimpi_key.h); the key never crosses the
 *  wire.  All words big endian:
 *      HELLO      caller -> callee   8 bytes: marker, version
 *      CHALLENGE  callee -> caller  24 bytes: marker, status (0: go on), nonce Nc (16)
 *      INTRO      caller -> callee 120 bytes: a record (below) with the caller's nonce
 *                                  Nd and MAC = HMAC(key "gimpi-in", Nc | INTRO[0..87])
 *      ANSWER     callee -> caller 120 bytes: a record with the status in the version
 *                                  word, the tids swapped, Nc in the nonce field and
 *                                  MAC = HMAC(key "gimpi-an", INTRO | ANSWER[0..87])
 *  A record is: marker, word (version or status), the sender's tid, the tid it talks to,
 *  its pktlen, ackmark, hiwater, its IMPI proc (24 bytes), its contact (16-byte address,
 *  port: what groupd has registered for it), a 16-byte nonce and the 32-byte MAC.  A
 *  refusal before the callee knows that the caller holds the key (GIMPI_INTRO_BADKEY,
 *  GIMPI_INTRO_BADVERSION) carries no MAC; every other answer does, and the caller checks
 *  it, so both ends know the other holds the key.  Nobody sends packets before an OK.
 *  See doc/data-plane.md, "Dynamic hosts". */
#ifndef GIMPI_MSG_DYNHOST_H
#define GIMPI_MSG_DYNHOST_H

#include "base/gimpi_key.h"
#include "impi/impi_wire.h"

#include <stdbool.h>
#include <stdint.h>

#define GIMPI_INTRO_MARKER 0xFF474448u          /* "\xffGDH" */
#define GIMPI_INTRO_CTX_IN "gimpi-in"           /* MAC context of the caller's INTRO */
#define GIMPI_INTRO_CTX_AN "gimpi-an"           /* MAC context of the callee's ANSWER */
enum {
    GIMPI_INTRO_VERSION = 2,
    GIMPI_INTRO_NONCE = 16,
    GIMPI_INTRO_HELLO_SIZE = 8,
    GIMPI_INTRO_CHALLENGE_SIZE = 8 + GIMPI_INTRO_NONCE,
    GIMPI_INTRO_MAC_AT = 28 + IMPI_PROC_SIZE + 20 + GIMPI_INTRO_NONCE,     /* 88 */
    GIMPI_INTRO_SIZE = GIMPI_INTRO_MAC_AT + GIMPI_KEY_MACLEN,             /* 120 */
};
/*  Answer (and challenge) statuses. */
enum {
    GIMPI_INTRO_OK = 0,
    GIMPI_INTRO_BADVERSION = 1,     /* unknown introduction version */
    GIMPI_INTRO_WRONGTID = 2,       /* the callee is not the task asked for */
    GIMPI_INTRO_DUP = 3,            /* already connected (or a static peer) */
    GIMPI_INTRO_RACE = 4,           /* both called: the callee's own call (higher tid) wins */
    GIMPI_INTRO_LEAVING = 5,        /* the callee is finishing, or knows the caller gone */
    GIMPI_INTRO_BADPARAM = 6,       /* bad tid or flow-control parameters */
    GIMPI_INTRO_BADKEY = 7,         /* the MAC is wrong: the keys differ (no MAC on it) */
    GIMPI_INTRO_NOTREG = 8,         /* groupd does not know the tid at that contact */
    GIMPI_INTRO_TOOMANY = 9,        /* the callee has its cap of introduced connections */
};

typedef struct {
    uint32_t word;              /* version (introduction) or status (answer) */
    int tid;                    /* the sender's tid */
    int target;                 /* the tid the sender talks to */
    uint32_t pktlen, ackmark, hiwater;
    impi_proc_t proc;           /* the sender's IMPI proc */
    uint8_t addr[16];           /* the sender's contact: listener address ... */
    int port;                   /* ... and port */
    uint8_t nonce[GIMPI_INTRO_NONCE];   /* INTRO: the caller's; ANSWER: the callee's */
    uint8_t mac[GIMPI_KEY_MACLEN];
} gimpi_intro_t;

/*  Encodes an introduction or answer record (the MAC as it is in the struct). */
void gimpi_intro_encode(uint8_t out[GIMPI_INTRO_SIZE], const gimpi_intro_t *in);
/*  Decodes one; -1 when the marker is wrong. */
int gimpi_intro_decode(const uint8_t in[GIMPI_INTRO_SIZE], gimpi_intro_t *out);
/*  The HELLO (marker, version). */
void gimpi_intro_hello(uint8_t out[GIMPI_INTRO_HELLO_SIZE]);
/*  A CHALLENGE: marker, status, nonce. */
void gimpi_intro_challenge(uint8_t out[GIMPI_INTRO_CHALLENGE_SIZE], uint32_t status,
                           const uint8_t nonce[GIMPI_INTRO_NONCE]);
/*  Reads a HELLO or CHALLENGE head: its word (version or status), or -1 when the marker
 *  is wrong. */
int64_t gimpi_intro_head(const uint8_t in[8]);
/*  Puts the caller's MAC into an encoded INTRO, given the callee's challenge nonce. */
void gimpi_intro_seal(const gimpi_key_t *key, const uint8_t nc[GIMPI_INTRO_NONCE],
                      uint8_t intro[GIMPI_INTRO_SIZE]);
/*  Whether an encoded INTRO carries the right MAC for challenge nonce nc. */
bool gimpi_intro_sealed(const gimpi_key_t *key, const uint8_t nc[GIMPI_INTRO_NONCE],
                        const uint8_t intro[GIMPI_INTRO_SIZE]);
/*  Puts the callee's MAC into an encoded ANSWER to the encoded INTRO. */
void gimpi_intro_seal_answer(const gimpi_key_t *key, const uint8_t intro[GIMPI_INTRO_SIZE],
                             uint8_t answer[GIMPI_INTRO_SIZE]);
/*  Whether an encoded ANSWER carries the right MAC for the encoded INTRO. */
bool gimpi_intro_answer_sealed(const gimpi_key_t *key, const uint8_t intro[GIMPI_INTRO_SIZE],
                               const uint8_t answer[GIMPI_INTRO_SIZE]);
/*  Text of an answer status. */
const char *gimpi_intro_strstatus(uint32_t status);

#endif
