/*  msg_intro.c — the codec of the dynamic hosts' introduction records (HELLO, CHALLENGE,
 *  INTRO, ANSWER; the format is in msg_dynhost.h): encoding, decoding, and the MACs that
 *  prove each side holds the job's key, under a context of its own for each direction.
 *  msg_dynhost.c runs the introductions themselves.
 */
#include "net/msg_internal.h"

#include <assert.h>
#include <string.h>

_Static_assert(GIMPI_MSG_KEY_SIZE == GIMPI_KEY_SIZE, "the public key size is the secret's");

/* ------------------------------------------------------------- the introduction codec */

/*  Offsets in a record (msg_dynhost.h). */
enum { AT_PROC = 28, AT_ADDR = 52, AT_PORT = 68, AT_NONCE = 72 };

/*  Writes an introduction or answer record. */
void gimpi_intro_encode(uint8_t out[GIMPI_INTRO_SIZE], const gimpi_intro_t *in)
{
    gimpi_be_put32(out, GIMPI_INTRO_MARKER);
    gimpi_be_put32(out + 4, in->word);
    gimpi_be_put32(out + 8, (uint32_t)in->tid);
    gimpi_be_put32(out + 12, (uint32_t)in->target);
    gimpi_be_put32(out + 16, in->pktlen);
    gimpi_be_put32(out + 20, in->ackmark);
    gimpi_be_put32(out + 24, in->hiwater);
    impi_proc_encode(out + AT_PROC, &in->proc);
    memcpy(out + AT_ADDR, in->addr, 16);
    gimpi_be_put32(out + AT_PORT, (uint32_t)in->port);
    memcpy(out + AT_NONCE, in->nonce, GIMPI_INTRO_NONCE);
    memcpy(out + GIMPI_INTRO_MAC_AT, in->mac, GIMPI_KEY_MACLEN);
}

/*  Reads an introduction or answer record. */
int gimpi_intro_decode(const uint8_t in[GIMPI_INTRO_SIZE], gimpi_intro_t *out)
{
    if (gimpi_be_get32(in) != GIMPI_INTRO_MARKER)
        return -1;
    out->word = gimpi_be_get32(in + 4);
    out->tid = (int)gimpi_be_get32(in + 8);
    out->target = (int)gimpi_be_get32(in + 12);
    out->pktlen = gimpi_be_get32(in + 16);
    out->ackmark = gimpi_be_get32(in + 20);
    out->hiwater = gimpi_be_get32(in + 24);
    impi_proc_decode(in + AT_PROC, &out->proc);
    memcpy(out->addr, in + AT_ADDR, 16);
    out->port = (int)gimpi_be_get32(in + AT_PORT);
    memcpy(out->nonce, in + AT_NONCE, GIMPI_INTRO_NONCE);
    memcpy(out->mac, in + GIMPI_INTRO_MAC_AT, GIMPI_KEY_MACLEN);
    return 0;
}

/*  The HELLO. */
void gimpi_intro_hello(uint8_t out[GIMPI_INTRO_HELLO_SIZE])
{
    gimpi_be_put32(out, GIMPI_INTRO_MARKER);
    gimpi_be_put32(out + 4, GIMPI_INTRO_VERSION);
}

/*  A CHALLENGE. */
void gimpi_intro_challenge(uint8_t out[GIMPI_INTRO_CHALLENGE_SIZE], uint32_t status,
                           const uint8_t nonce[GIMPI_INTRO_NONCE])
{
    gimpi_be_put32(out, GIMPI_INTRO_MARKER);
    gimpi_be_put32(out + 4, status);
    memcpy(out + 8, nonce, GIMPI_INTRO_NONCE);
}

/*  The word of a HELLO or CHALLENGE, or -1 when it is not one. */
int64_t gimpi_intro_head(const uint8_t in[8])
{
    return gimpi_be_get32(in) == GIMPI_INTRO_MARKER ? (int64_t)gimpi_be_get32(in + 4) : -1;
}

/*  Makes (check false) or checks the MAC at rec + GIMPI_INTRO_MAC_AT under context ctx,
 *  over alen bytes of a followed by rec up to its MAC: the challenge nonce and the INTRO
 *  for the caller's, the whole INTRO and the ANSWER for the callee's. */
static bool s_mac(const gimpi_key_t *key, const char ctx[8], const uint8_t *a, size_t alen,
                  uint8_t *rec, bool check)
{
    uint8_t d[GIMPI_INTRO_SIZE + GIMPI_INTRO_MAC_AT];
    assert(alen <= GIMPI_INTRO_SIZE);
    memcpy(d, a, alen);
    memcpy(d + alen, rec, GIMPI_INTRO_MAC_AT);
    if (check)
        return gimpi_key_mac_ok(key, ctx, d, alen + GIMPI_INTRO_MAC_AT, rec + GIMPI_INTRO_MAC_AT);
    gimpi_key_mac(key, ctx, d, alen + GIMPI_INTRO_MAC_AT, rec + GIMPI_INTRO_MAC_AT);
    return true;
}

/*  Puts the caller's MAC into an INTRO. */
void gimpi_intro_seal(const gimpi_key_t *key, const uint8_t nc[GIMPI_INTRO_NONCE],
                      uint8_t intro[GIMPI_INTRO_SIZE])
{
    s_mac(key, GIMPI_INTRO_CTX_IN, nc, GIMPI_INTRO_NONCE, intro, false);
}

/*  Whether an INTRO's MAC holds for challenge nonce nc. */
bool gimpi_intro_sealed(const gimpi_key_t *key, const uint8_t nc[GIMPI_INTRO_NONCE],
                        const uint8_t intro[GIMPI_INTRO_SIZE])
{
    return s_mac(key, GIMPI_INTRO_CTX_IN, nc, GIMPI_INTRO_NONCE, (uint8_t *)intro, true);
}

/*  Puts the callee's MAC into an ANSWER. */
void gimpi_intro_seal_answer(const gimpi_key_t *key, const uint8_t intro[GIMPI_INTRO_SIZE],
                             uint8_t answer[GIMPI_INTRO_SIZE])
{
    s_mac(key, GIMPI_INTRO_CTX_AN, intro, GIMPI_INTRO_SIZE, answer, false);
}

/*  Whether an ANSWER's MAC holds for the INTRO it answers. */
bool gimpi_intro_answer_sealed(const gimpi_key_t *key, const uint8_t intro[GIMPI_INTRO_SIZE],
                               const uint8_t answer[GIMPI_INTRO_SIZE])
{
    return s_mac(key, GIMPI_INTRO_CTX_AN, intro, GIMPI_INTRO_SIZE, (uint8_t *)answer, true);
}

/*  Words for the answer statuses. */
const char *gimpi_intro_strstatus(uint32_t status)
{
    static const char *const text[] = {
        "accepted", "unknown introduction version", "not the task asked for",
        "already connected", "both called at once (the other call wins)",
        "the task is leaving or knows the caller gone", "bad tid or parameters",
        "the keys differ", "groupd does not know that tid at that contact",
        "too many introduced connections",
    };
    return status < sizeof text / sizeof *text ? text[status] : "unknown status";
}
