/*  pvm_loopback.c — the in-process loopback transport (see pvm_loopback.h).
 *
 *  A FIFO of pvm_msg_t: send copies the bytes in, next hands the oldest out.
 */
#include "pvm/pvm_loopback.h"
#include "gimpi.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP_DROPPED 64

struct pvm_loopback_t {
    int tid, parent;
    pvm_msg_t *fifo;
    int head, count, cap;       /* ring buffer */
    int ndropped;
    int dropped[KEEP_DROPPED];
    int fail;
};

/*  A loopback. */
pvm_loopback_t *pvm_loopback_new(int tid, int parent)
{
    if (tid <= 0)
        return NULL;
    pvm_loopback_t *self = calloc(1, sizeof *self);
    if (self) {
        self->tid = tid;
        self->parent = parent;
    }
    return self;
}

/*  Frees it and its queued messages. */
void pvm_loopback_destroy(pvm_loopback_t **self_p)
{
    assert(self_p);
    pvm_loopback_t *self = *self_p;
    if (!self)
        return;
    for (int i = 0; i < self->count; i++)
        free(self->fifo[(self->head + i) % self->cap].bytes);
    free(self->fifo);
    free(self);
    *self_p = NULL;
}

/*  Dropped message count. */
int pvm_loopback_dropped(const pvm_loopback_t *self)
{
    assert(self);
    return self->ndropped;
}

/*  Destination of the i-th dropped message. */
int pvm_loopback_dropped_dst(const pvm_loopback_t *self, int i)
{
    assert(self);
    return i >= 0 && i < self->ndropped && i < KEEP_DROPPED ? self->dropped[i] : 0;
}

/*  Queued messages. */
int pvm_loopback_pending(const pvm_loopback_t *self)
{
    assert(self);
    return self->count;
}

/*  Failure injection for sends. */
void pvm_loopback_fail_sends(pvm_loopback_t *self, int code)
{
    assert(self);
    self->fail = code;
}

/*  vtable: own tid. */
static int s_mytid(void *impl)
{
    return ((pvm_loopback_t *)impl)->tid;
}

/*  vtable: parent tid. */
static int s_parent(void *impl)
{
    return ((pvm_loopback_t *)impl)->parent;
}

/*  vtable: queue a copy for ourselves, drop others. */
static int s_send(void *impl, int dst, int tag, int ctxid, int encoding, uint8_t *frame,
                  const void *bytes, size_t len)
{
    pvm_loopback_t *self = impl;
    (void)frame;                        /* the copy below needs no room in front */
    if (self->fail)
        return self->fail;
    if (dst != self->tid) {
        if (self->ndropped < KEEP_DROPPED)
            self->dropped[self->ndropped] = dst;
        self->ndropped++;
        return 0;
    }
    if (self->count == self->cap) {
        int cap = self->cap ? 2 * self->cap : 16;
        pvm_msg_t *fifo = malloc((size_t)cap * sizeof *fifo);
        if (!fifo)
            return GIMPI_ENOMEM;
        for (int i = 0; i < self->count; i++)
            fifo[i] = self->fifo[(self->head + i) % self->cap];
        free(self->fifo);
        self->fifo = fifo;
        self->cap = cap;
        self->head = 0;
    }
    void *copy = NULL;
    if (len) {
        copy = malloc(len);
        if (!copy)
            return GIMPI_ENOMEM;
        memcpy(copy, bytes, len);
    }
    self->fifo[(self->head + self->count) % self->cap] =
        (pvm_msg_t){ self->tid, tag, ctxid, encoding, copy, len, 0, NULL, 0 };
    self->count++;
    return 0;
}

/*  vtable: the oldest message, or sleep out the timeout. */
static int s_next(void *impl, int timeout_ms, pvm_msg_t *msg)
{
    pvm_loopback_t *self = impl;
    if (self->count == 0) {
        if (timeout_ms < 0)
            return GIMPI_ESYSERR;       /* nobody else can ever send */
        struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L };
        while (nanosleep(&ts, &ts) != 0)
            ;
        return 0;
    }
    *msg = self->fifo[self->head];
    self->head = (self->head + 1) % self->cap;
    self->count--;
    return 1;
}

/*  vtable: destroy. */
static void s_destroy(void *impl)
{
    pvm_loopback_t *self = impl;
    pvm_loopback_destroy(&self);
}

const pvm_transport_ops_t pvm_loopback_ops = {
    .name = "loopback",
    .mytid = s_mytid,
    .parent = s_parent,
    .send = s_send,
    .next = s_next,
    .siblings = NULL,
    .destroy = s_destroy,
};
