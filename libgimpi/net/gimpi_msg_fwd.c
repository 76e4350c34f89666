/*  gimpi_msg_fwd.c — forwarding of large broadcasts through the receivers' engines (see
 *  gimpi_msg_fwd.h and doc/collectives.md).  Every packet on GIMPI_CID_FWD starts with
 *  this header (network byte order, FWD_HDR bytes, then 4 bytes per receiver):
 *      u32 magic 'GFWD' | u32 broadcaster tid | u64 operation id | u64 target cid |
 *      u32 tag | u32 receivers n | u64 total length | u64 offset | u32 flags |
 *      u32 chunk size | u32 tids[n]
 *  then, for a data chunk, its bytes.  Position 0 is the broadcaster, position i >= 1
 *  receiver tids[i-1].  A position heads a range [lo, hi) of positions: it keeps the lower
 *  ceil(len/2) and hands the upper half to its next child (a binomial tree, largest subtree
 *  first), so a chunk crosses about log2(n+1) hops.
 *
 *  Order and failures: the broadcaster first sends every receiver a STUB (header only)
 *  directly, which puts a placeholder for the message into the receiver's queue in the
 *  order of that pair's other messages; the data then flows down the tree and fills it.
 *  Each receiver's engine acknowledges a complete message (GIMPI_CID_FWDACK).  The
 *  broadcaster collects the acknowledgements in position order, watching each receiver's
 *  parent: a receiver or parent that has died makes it resend the data DIRECT (not to be
 *  forwarded) to the unacknowledged receivers of that subtree; chunks are de-duplicated by
 *  offset and late ones of a finished message are dropped.  So a dead forwarder costs a
 *  resend, never a hang.
 */
#include "net/gimpi_msg_fwd.h"
#include "net/msg_fwd_hooks.h"
#include "gimpi.h"
#include "impi/impi_wire.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FWD_MAGIC 0x47465744u       /* "GFWD" */
#define FWD_HDR 56
#define F_STUB 1u                   /* header only: the placeholder, sent directly */
#define F_DIRECT 2u                 /* a resent chunk: do not forward */
#define TOMBS 64                    /* finished operations remembered per task */

typedef struct asm_t {              /* a message being reassembled */
    struct asm_t *next;
    int root;
    uint64_t opid, cid;
    int tag;
    uint64_t total, got;
    size_t chunk;
    uint8_t *data, *seen;           /* seen: one byte per chunk */
    int in_user;                    /* chunks go straight to the claiming receive's buffer */
    void *ph;                       /* the placeholder, once the stub arrived */
} asm_t;

struct gimpi_fwd_t {
    asm_t *open;
    struct {
        int root;
        uint64_t opid;
    } tomb[TOMBS];
    int ntomb;
};

/* ------------------------------------------------------------------ the tree */

/*  The range [*lo, *hi) of positions that position i heads in a tree of k positions. */
static void s_range(int i, int k, int *lo, int *hi)
{
    *lo = 0;
    *hi = k;
    while (*lo != i) {
        int mid = *lo + (*hi - *lo + 1) / 2;
        if (i >= mid)
            *lo = mid;
        else
            *hi = mid;
    }
}

/*  The children (positions) of position i, largest subtree first; returns how many. */
static int s_children(int i, int k, int *kids)
{
    int lo, hi, n = 0;
    s_range(i, k, &lo, &hi);
    while (hi - lo > 1) {
        int mid = lo + (hi - lo + 1) / 2;
        kids[n++] = mid;
        hi = mid;
    }
    return n;
}

/*  The parent position of position i > 0. */
static int s_parent(int i, int k)
{
    int lo = 0, hi = k, parent = 0;
    while (lo != i) {
        int mid = lo + (hi - lo + 1) / 2;
        if (i >= mid) {
            parent = lo;
            lo = mid;
        } else
            hi = mid;
    }
    return parent;
}

/*  Chunk payload bytes for n receivers under packet length pktlen (0: cannot forward). */
static size_t s_chunk(size_t pktlen, int n)
{
    size_t hdr = FWD_HDR + 4 * (size_t)n;
    return pktlen > hdr + 1024 ? pktlen - hdr : 0;
}

/*  Writes a header. */
static void s_put_header(uint8_t *p, int root, uint64_t opid, uint64_t cid, int tag,
                         const int *tids, int n, size_t total, size_t off, uint32_t flags,
                         size_t chunk)
{
    gimpi_be_put32(p, FWD_MAGIC);
    gimpi_be_put32(p + 4, (uint32_t)root);
    gimpi_be_put64(p + 8, opid);
    gimpi_be_put64(p + 16, cid);
    gimpi_be_put32(p + 24, (uint32_t)tag);
    gimpi_be_put32(p + 28, (uint32_t)n);
    gimpi_be_put64(p + 32, total);
    gimpi_be_put64(p + 40, off);
    gimpi_be_put32(p + 48, flags);
    gimpi_be_put32(p + 52, (uint32_t)chunk);
    for (int i = 0; i < n; i++)
        gimpi_be_put32(p + FWD_HDR + 4 * (size_t)i, (uint32_t)tids[i]);
}

/*  The acknowledgement tag of an operation. */
static int s_acktag(uint64_t opid)
{
    return (int)(opid & 0x3fffffff);
}

/* ------------------------------------------------------------------ broadcaster */

/*  Sends every chunk to position pos (flags already in the buffers); 0 or < 0. */
static int s_send_chunks(gimpi_msg_t *msg, int tid, uint8_t *all, size_t nc, size_t stride,
                         size_t hdr, size_t len, size_t chunk)
{
    int rc = 0;
    for (size_t c = 0; c < nc && rc == 0; c++) {
        size_t off = c * chunk, clen = len - off < chunk ? len - off : chunk;
        rc = gimpi_msg__send_cid(msg, GIMPI_CID_FWD, tid, 0, all + c * stride, hdr + clen);
    }
    return rc;
}

/*  Resends the data DIRECT to the unacknowledged receivers of position top's subtree. */
static void s_resend(gimpi_msg_t *msg, const int *tids, int n, int top, char *acked,
                     char *direct, uint8_t *all, size_t nc, size_t stride, size_t hdr, size_t len,
                     size_t chunk)
{
    for (size_t c = 0; c < nc; c++)
        gimpi_be_put32(all + c * stride + 48, F_DIRECT);
    int lo, hi;
    s_range(top, n + 1, &lo, &hi);
    for (int q = lo; q < hi; q++)
        if (q > 0 && !acked[q] && !direct[q]) {
            direct[q] = 1;
            s_send_chunks(msg, tids[q - 1], all, nc, stride, hdr, len, chunk);
        }
}

/*  Broadcaster side: stubs directly, chunks down the tree, acknowledgements back. */
int gimpi_msg_fwd_bcast(gimpi_msg_t *msg, uint64_t cid, int tag, const void *buf, size_t len,
                        const int *tids, int n)
{
    assert(msg && tids && n > 0);
    gimpi_msg__before_send(msg);        /* once: the copies below do not run it again */
    size_t chunk = s_chunk(gimpi_msg__pktlen(msg), n);
    int kids[32];
    int nk = s_children(0, n + 1, kids);
    size_t nc = chunk ? (len + chunk - 1) / chunk : 0;
    if (!chunk || nc == 0) {            /* packets too small: straight to everybody */
        int rc = 0;
        for (int i = 0; i < n; i++) {
            int r = gimpi_msg__send_cid(msg, cid, tids[i], tag, buf, len);
            rc = rc ? rc : (r < 0 ? GIMPI_ESYSERR : 0);
        }
        return rc;
    }
    size_t hdr = FWD_HDR + 4 * (size_t)n, stride = hdr + chunk;
    uint8_t *all = malloc(nc * stride), *stub = malloc(hdr);
    gimpi_msg_req_t **req = calloc(nc * (size_t)nk + (size_t)n, sizeof *req);
    char *acked = calloc((size_t)n + 1, 1), *direct = calloc((size_t)n + 1, 1);
    if (!all || !stub || !req || !acked || !direct) {
        free(all);
        free(stub);
        free(req);
        free(acked);
        free(direct);
        return GIMPI_ENOMEM;
    }
    struct timespec ts;                 /* operation id: unique per broadcaster over time */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t opid = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    int me = gimpi_msg_mytid(msg), rc = 0;
    s_put_header(stub, me, opid, cid, tag, tids, n, len, 0, F_STUB, chunk);
    size_t nr = 0;
    for (int i = 0; i < n; i++)         /* placeholders, in each pair's order */
        if (gimpi_msg__isend_cid(msg, GIMPI_CID_FWD, tids[i], 0, stub, hdr, 0, &req[nr]) == 0)
            nr++;
    const uint8_t *src = buf;
    for (size_t c = 0; c < nc; c++) {
        uint8_t *p = all + c * stride;
        size_t off = c * chunk, clen = len - off < chunk ? len - off : chunk;
        s_put_header(p, me, opid, cid, tag, tids, n, len, off, 0, chunk);
        memcpy(p + hdr, src + off, clen);
        for (int k = 0; k < nk; k++)
            if (gimpi_msg__isend_cid(msg, GIMPI_CID_FWD, tids[kids[k] - 1], 0, p, hdr + clen,
                                     0, &req[nr]) == 0)
                nr++;
    }
    for (size_t i = 0; i < nr; i++)
        gimpi_msg_wait(msg, &req[i], NULL);     /* failures: seen in the next phase */
    /* acknowledgements in position order (ancestors first), watching the parent */
    int atag = s_acktag(opid);
    for (int q = 1; q <= n; q++) {
        while (!acked[q]) {
            int parent = direct[q] ? 0 : s_parent(q, n + 1);
            int flag = 0;
            gimpi_status_t st;
            int r = gimpi_msg_tprobe_cid(msg, GIMPI_CID_FWDACK, tids[q - 1], atag, -1,
                                         parent ? tids[parent - 1] : GIMPI_ANY, &flag, &st);
            if (r == 0 && flag) {
                char b;
                gimpi_msg_req_t *rq;
                if (gimpi_msg_irecv_cid(msg, GIMPI_CID_FWDACK, tids[q - 1], atag, &b, 0, &rq) == 0)
                    gimpi_msg_wait(msg, &rq, NULL);
                acked[q] = 1;
            } else if (r == GIMPI_ESYSERR && !direct[q]) {
                /* the receiver itself gone: its subtree lacks the data; else its parent */
                int dead = gimpi_msg_tprobe_cid(msg, GIMPI_CID_FWDACK, tids[q - 1], atag, 0,
                                                GIMPI_ANY, &flag, &st) < 0;
                if (dead)
                    acked[q] = 1;
                s_resend(msg, tids, n, dead || !parent ? q : parent, acked, direct, all, nc,
                         stride, hdr, len, chunk);
                if (dead)
                    rc = GIMPI_ESYSERR;
            } else {                    /* the receiver itself is gone (or no memory) */
                rc = GIMPI_ESYSERR;
                acked[q] = 1;
            }
        }
    }
    free(req);
    free(all);
    free(stub);
    free(acked);
    free(direct);
    return rc;
}

/* ------------------------------------------------------------------ receivers' engines */

/*  1 when (root, opid) finished here already. */
static int s_is_tomb(const gimpi_fwd_t *s, int root, uint64_t opid)
{
    for (int i = 0; i < TOMBS && i < s->ntomb; i++)
        if (s->tomb[i].root == root && s->tomb[i].opid == opid)
            return 1;
    return 0;
}

/*  Unlinks and frees a record (its data unless taken). */
static void s_drop(gimpi_fwd_t *s, asm_t *a)
{
    asm_t **pp = &s->open;
    while (*pp && *pp != a)
        pp = &(*pp)->next;
    if (*pp)
        *pp = a->next;
    free(a->data);
    free(a->seen);
    free(a);
}

/*  Delivers a complete message with its placeholder, acknowledges, remembers it. */
static void s_finish(gimpi_msg_t *msg, gimpi_fwd_t *s, asm_t *a)
{
    if (a->in_user)
        gimpi_msg__fill_claimed(msg, a->ph);
    else {
        gimpi_msg__fill(msg, a->ph, a->data ? a->data : calloc(1, 1));
        a->data = NULL;
    }
    gimpi_msg__send_owned(msg, GIMPI_CID_FWDACK, a->root, s_acktag(a->opid), NULL, 0);
    s->tomb[s->ntomb % TOMBS].root = a->root;
    s->tomb[s->ntomb % TOMBS].opid = a->opid;
    s->ntomb++;
    s_drop(s, a);
}

/*  Finds or opens the record of (root, opid). */
static asm_t *s_record(gimpi_fwd_t *s, int root, uint64_t opid, uint64_t cid, int tag,
                       uint64_t total, size_t chunk)
{
    for (asm_t *a = s->open; a; a = a->next)
        if (a->root == root && a->opid == opid)
            return a;
    asm_t *a = calloc(1, sizeof *a);
    size_t nch = chunk ? (size_t)((total + chunk - 1) / chunk) : 0;
    if (!a)
        return NULL;
    a->seen = calloc(nch ? nch : 1, 1);
    if (!a->seen) {
        free(a);
        return NULL;
    }
    a->root = root;
    a->opid = opid;
    a->cid = cid;
    a->tag = tag;
    a->total = total;
    a->chunk = chunk;
    a->next = s->open;
    s->open = a;
    return a;
}

/*  Stores a chunk: straight into the buffer of the receive that claimed the message when
 *  there is one (moving what came before it there first), else into the record. */
static int s_store(gimpi_msg_t *msg, asm_t *a, uint64_t off, const uint8_t *src, size_t clen)
{
    size_t usz = 0;
    uint8_t *ub = a->ph && !a->in_user ? gimpi_msg__claim_buf(msg, a->ph, &usz) : NULL;
    if (ub && usz >= a->total) {
        if (a->data && a->got)
            for (size_t c = 0; c * a->chunk < a->total; c++)
                if (a->seen[c]) {
                    size_t o = c * a->chunk, l = a->total - o < a->chunk ? a->total - o : a->chunk;
                    memcpy(ub + o, a->data + o, l);
                }
        free(a->data);
        a->data = NULL;
        a->in_user = 1;
    }
    if (a->in_user) {
        memcpy(gimpi_msg__claim_buf(msg, a->ph, &usz) + off, src, clen);
        return 0;
    }
    if (!a->data && (a->data = malloc(a->total)) == NULL)
        return -1;
    memcpy(a->data + off, src, clen);
    return 0;
}

/*  Engine side (hooks->arrived): a stub or a chunk arrived. */
static void s_arrived(gimpi_msg_t *msg, gimpi_fwd_t **state, int src, uint8_t *data,
                      size_t len)
{
    (void)src;
    if (!*state)
        *state = calloc(1, sizeof **state);
    gimpi_fwd_t *s = *state;
    if (!s || len < FWD_HDR || gimpi_be_get32(data) != FWD_MAGIC) {
        free(data);
        return;
    }
    int root = (int)gimpi_be_get32(data + 4);
    uint64_t opid = gimpi_be_get64(data + 8), cid = gimpi_be_get64(data + 16);
    int tag = (int)gimpi_be_get32(data + 24);
    uint32_t n = gimpi_be_get32(data + 28), flags = gimpi_be_get32(data + 48);
    uint64_t total = gimpi_be_get64(data + 32), off = gimpi_be_get64(data + 40);
    size_t chunk = gimpi_be_get32(data + 52);
    size_t hdr = FWD_HDR + 4 * (size_t)n;
    if (n == 0 || n > (1u << 20) || len < hdr || chunk == 0 || off % chunk ||
        off + (len - hdr) > total || s_is_tomb(s, root, opid)) {
        free(data);
        return;
    }
    asm_t *a = s_record(s, root, opid, cid, tag, total, chunk);
    if (!a) {
        free(data);
        return;
    }
    if (flags & F_STUB) {
        if (!a->ph)
            a->ph = gimpi_msg__placeholder(msg, cid, root, tag, total);
        free(data);
        if (a->ph && a->got == a->total)
            s_finish(msg, s, a);
        return;
    }
    size_t clen = len - hdr, idx = off / chunk;
    if (!a->seen[idx] && s_store(msg, a, off, data + hdr, clen) == 0) {
        a->seen[idx] = 1;
        a->got += clen;
    }
    if (!(flags & F_DIRECT)) {
        int me = gimpi_msg_mytid(msg), pos = -1, kids[32];
        for (uint32_t i = 0; i < n && pos < 0; i++)
            if ((int)gimpi_be_get32(data + FWD_HDR + 4 * (size_t)i) == me)
                pos = (int)i + 1;
        int nk = pos > 0 ? s_children(pos, (int)n + 1, kids) : 0;
        for (int k = 0; k < nk; k++) {
            int child = (int)gimpi_be_get32(data + FWD_HDR + 4 * (size_t)(kids[k] - 1));
            uint8_t *out = data;
            if (k < nk - 1) {
                out = malloc(len);
                if (!out)
                    continue;
                memcpy(out, data, len);
            } else
                data = NULL;
            gimpi_msg__send_owned(msg, GIMPI_CID_FWD, child, 0, out, len);
        }
    }
    free(data);
    if (a->ph && a->got == a->total)
        s_finish(msg, s, a);
}

/*  Engine side (hooks->gone): broadcasts from a task that has gone fail where they are
 *  still open. */
static void s_gone(gimpi_msg_t *msg, gimpi_fwd_t *s, int tid)
{
    for (asm_t *a = s->open, *nx; a; a = nx) {
        nx = a->next;
        if (a->root == tid) {
            if (a->ph)
                gimpi_msg__fail(msg, a->ph);
            s_drop(s, a);
        }
    }
}

/*  Frees every unfinished reassembly. */
void gimpi_msg_fwd_free(gimpi_msg_t *msg, gimpi_fwd_t **state)
{
    assert(state);
    gimpi_fwd_t *s = *state;
    if (!s)
        return;
    while (s->open) {
        if (s->open->ph)
            gimpi_msg__fail(msg, s->open->ph);
        s_drop(s, s->open);
    }
    free(s);
    *state = NULL;
}

/*  The hooks the engine calls (msg_fwd_hooks.h). */
const gimpi_msg_fwd_hooks_t gimpi_msg_fwd_hooks = { .arrived = s_arrived, .gone = s_gone };
