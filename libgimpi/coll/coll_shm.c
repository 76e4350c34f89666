/*  coll_shm.c — the shared-memory segment of the members of a view on one machine, and the
 *  barrier and reduce that run in it (coll_shm.h, doc/collectives.md "Within a node").
 *
 *  Layout: a 64-byte header that never changes after creation (magic, layout, n, size,
 *  chunk, nonce, checksum), a line holding the broken flag, three shared lines (the
 *  barrier's release generation, the count of reduce chunks copied out to their root, the
 *  outcome of reduces with a user function), then two lines per member (its barrier
 *  arrival counter, its reduce progress and statuses), then two reduce slots of chunk bytes
 *  per member.  Every counter only grows (modulo 2^32) and every member computes the value
 *  it waits for from its own count of operations, so nothing is ever reset; a waited-for
 *  counter that is further ahead than a correct member could have brought it is corrupt.
 *  A wait word sits next to a count of its sleepers: the one who moves the word wakes the
 *  futex only when somebody sleeps on it.
 */
#include "coll/coll_shm.h"
#include "base/gimpi_bind.h"
#include "gimpi.h"            /* the GIMPI_E* codes */
#include "base/gimpi_clock.h"
#include "base/gimpi_tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x48534347u           /* "GCSH" */
#define LAYOUT 1u
#define LINE 64
#define HDR_CHECKED 56              /* header bytes under the checksum */
#define OFF_BROKEN 64
#define OFF_GEN 128                 /* barrier release generation */
#define OFF_OUT 192                 /* reduce chunks copied out to their root */
#define OFF_FIN 256                 /* reduces with a user function finished, and outcome */
#define OFF_MEMBERS 320             /* two lines per member */
#define SLEEP_MS 10                 /* one futex sleep */
#define LIVE_MS 100                 /* between two liveness rounds of a sleeping wait */
#define SPIN_US 50                  /* spin this long before sleeping (own cores) */
#define SPIN_US_OVER 10             /* ... when there are more members than cores */
#define PAUSES 16                   /* looks with a pause before the spin yields the core */
#define TREE_FLAT_MAX 16            /* barrier: one counter up to this many members */
#define TREE_RADIX 4                /* above (with a core each): a tree of this radix */

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() do { } while (0)
#endif

typedef struct {                    /* a word others wait on, with its sleepers */
    uint32_t v;
    uint32_t sleepers;
} word_t;

struct coll_shm_t {
    uint8_t *base;
    size_t size;
    int fd;                         /* the creator's memfd until every member mapped it */
    int n, pos;
    size_t chunk;
    uint8_t nonce[16];
    uint8_t hdr[HDR_CHECKED + 4];   /* the header as checked when mapped */
    int radix;                      /* barrier tree: children per member */
    int spin_us;
    int over;                       /* more members than cores: yield while spinning */
    int pauses;                     /* looks before the spin starts yielding */
    uint32_t episodes;              /* barriers done here */
    uint32_t chunks;                /* reduce chunks done here */
    uint32_t fins;                  /* reduces with wait_all done here */
    uint32_t reduces;               /* reduces done here */
    coll_shm_alive_fn alive;
    void *alive_arg;
};

/* ------------------------------------------------------------------ header and offer */

/*  FNV-1a over len bytes. */
static uint32_t s_fnv(const uint8_t *p, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/*  Little-endian stores and loads. */
static void s_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void s_put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t s_get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t s_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/*  The segment bytes for n members with slots of chunk bytes (0 when too big). */
static uint64_t s_size(int n, uint64_t chunk)
{
    if (n < 2 || n > 4096 || chunk < 64 || chunk > (1u << 24) || chunk % 64)
        return 0;
    uint64_t ctl = OFF_MEMBERS + (uint64_t)n * 2 * LINE;
    ctl = (ctl + 4095) & ~(uint64_t)4095;
    return ctl + (uint64_t)n * 2 * chunk;
}

/*  Writes the header (magic, layout, n, size, chunk, nonce, checksum). */
static void s_header_write(uint8_t *h, int n, uint64_t size, uint64_t chunk,
                           const uint8_t nonce[16])
{
    s_put32(h, MAGIC);
    s_put32(h + 4, LAYOUT);
    s_put32(h + 8, (uint32_t)n);
    s_put32(h + 12, 0);
    s_put64(h + 16, size);
    s_put64(h + 24, chunk);
    memcpy(h + 32, nonce, 16);
    memset(h + 48, 0, 8);
    s_put32(h + HDR_CHECKED, s_fnv(h, HDR_CHECKED));
}

/*  Checks a header against what the offer promised. */
int coll_shm_check_header(const void *hdr, size_t len, int n, uint64_t size, uint64_t chunk,
                          const uint8_t nonce[16])
{
    const uint8_t *h = hdr;
    if (!h || len < LINE || !nonce)
        return GIMPI_EBADMSG;
    if (s_get32(h) != MAGIC || s_get32(h + 4) != LAYOUT || s_get32(h + HDR_CHECKED)
        != s_fnv(h, HDR_CHECKED))
        return GIMPI_EBADMSG;
    if (s_get32(h + 8) != (uint32_t)n || s_get64(h + 16) != size || s_get64(h + 24) != chunk
        || memcmp(h + 32, nonce, 16) != 0 || s_size(n, chunk) != size)
        return GIMPI_EBADMSG;
    return 0;
}

/*  Encodes an offer. */
void coll_shm_offer_encode(const coll_shm_offer_t *o, uint8_t buf[COLL_SHM_OFFER_SIZE])
{
    memset(buf, 0, COLL_SHM_OFFER_SIZE);
    memcpy(buf, o->boot, 16);
    s_put32(buf + 16, o->uid);
    s_put32(buf + 20, (uint32_t)o->pid);
    s_put32(buf + 24, (uint32_t)o->fd);
    s_put32(buf + 28, (uint32_t)o->n);
    s_put64(buf + 32, o->size);
    s_put64(buf + 40, o->chunk);
    memcpy(buf + 48, o->nonce, 16);
}

/*  Decodes an offer: 0, or GIMPI_EBADMSG for a wrong length or impossible values. */
int coll_shm_offer_decode(const uint8_t *buf, size_t len, coll_shm_offer_t *o)
{
    if (!buf || len != COLL_SHM_OFFER_SIZE || !o)
        return GIMPI_EBADMSG;
    memcpy(o->boot, buf, 16);
    o->uid = s_get32(buf + 16);
    o->pid = (int32_t)s_get32(buf + 20);
    o->fd = (int32_t)s_get32(buf + 24);
    o->n = (int32_t)s_get32(buf + 28);
    o->size = s_get64(buf + 32);
    o->chunk = s_get64(buf + 40);
    memcpy(o->nonce, buf + 48, 16);
    if (o->pid <= 0 || o->fd < 0 || s_size(o->n, o->chunk) == 0
        || o->size != s_size(o->n, o->chunk))
        return GIMPI_EBADMSG;
    return 0;
}

/*  This machine's boot id (16 bytes from /proc/sys/kernel/random/boot_id); 0 or -1. */
static int s_boot_id(uint8_t id[16])
{
    char text[64] = { 0 };
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read(fd, text, sizeof text - 1);
    close(fd);
    int k = 0;
    for (ssize_t i = 0; i < r && k < 32; i++) {
        char c = text[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            continue;
        id[k / 2] = (uint8_t)(k % 2 ? id[k / 2] | v : v << 4);
        k++;
    }
    return k == 32 ? 0 : -1;
}

/*  The node key (coll_shm.h): the boot id (zeros when unreadable: such members never
 *  share) and FNV-1a 64 of the virtual machine host's name. */
void coll_shm_node_key(uint8_t key[COLL_SHM_NODE_KEY])
{
    memset(key, 0, COLL_SHM_NODE_KEY);
    if (s_boot_id(key) < 0)
        memset(key, 0, 16);
    const char *host = gimpi_env("GIMPI_HOST");
    uint64_t h = 1469598103934665603ull;
    for (const char *c = host ? host : ""; *c; c++)
        h = (h ^ (uint8_t)*c) * 1099511628211ull;
    s_put64(key + 16, h);
}

/* ------------------------------------------------------------------ the segment */

/*  The member's settings that do not depend on the segment: barrier radix and spinning. */
static void s_tune(coll_shm_t *self)
{
    int cpus = gimpi_bind_cpus();
    int over = cpus < 1 || self->n > cpus;
    self->over = over;
    self->radix = self->n <= TREE_FLAT_MAX || over ? self->n - 1 : TREE_RADIX;
    self->spin_us = over ? SPIN_US_OVER : SPIN_US;
    const char *e = gimpi_env("GIMPI_SHM_SPIN_US");
    if (e && *e)
        self->spin_us = atoi(e);
    e = gimpi_env("GIMPI_SHM_PAUSES");             /* a core of our own: never yield */
    self->pauses = e && *e ? atoi(e) : !over && gimpi_bind_own_core() ? INT_MAX : PAUSES;
    e = gimpi_env("GIMPI_SHM_RADIX");
    if (e && atoi(e) > 0)
        self->radix = atoi(e) < self->n - 1 ? atoi(e) : self->n - 1;
}

/*  Fills random bytes (getrandom-backed /dev/urandom, else the clock and pid). */
static void s_random(uint8_t *p, size_t len)
{
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t r = fd >= 0 ? read(fd, p, len) : -1;
    if (fd >= 0)
        close(fd);
    if (r != (ssize_t)len) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)getpid();
        for (size_t i = 0; i < len; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            p[i] = (uint8_t)(x >> 56);
        }
    }
}

/*  Makes the segment (position 0). */
coll_shm_t *coll_shm_create(int n, size_t chunk, coll_shm_offer_t *offer)
{
    chunk &= ~(size_t)63;
    uint64_t size = s_size(n, chunk);
    if (!size || !offer)
        return NULL;
    coll_shm_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->fd = memfd_create("gimpi-coll", MFD_CLOEXEC);
    if (self->fd < 0 || ftruncate(self->fd, (off_t)size) < 0 || s_boot_id(offer->boot) < 0) {
        coll_shm_destroy(&self);
        return NULL;
    }
    self->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd, 0);
    if (self->base == MAP_FAILED) {
        self->base = NULL;
        coll_shm_destroy(&self);
        return NULL;
    }
    self->size = size;
    self->n = n;
    self->chunk = chunk;
    s_random(self->nonce, 16);
    s_header_write(self->base, n, size, chunk, self->nonce);
    memcpy(self->hdr, self->base, sizeof self->hdr);
    s_tune(self);
    offer->uid = (uint32_t)getuid();
    offer->pid = (int32_t)getpid();
    offer->fd = self->fd;
    offer->n = n;
    offer->size = size;
    offer->chunk = chunk;
    memcpy(offer->nonce, self->nonce, 16);
    return self;
}

/*  Maps an offered segment as member pos. */
coll_shm_t *coll_shm_attach(const coll_shm_offer_t *offer, int pos, int *err)
{
    int dummy;
    if (!err)
        err = &dummy;
    *err = GIMPI_ENOTIMPL;
    uint8_t boot[16];
    if (!offer || pos <= 0 || pos >= offer->n || s_boot_id(boot) < 0
        || memcmp(boot, offer->boot, 16) != 0 || offer->uid != (uint32_t)getuid())
        return NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)offer->pid, (int)offer->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    *err = GIMPI_EBADMSG;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != offer->size
        || s_size(offer->n, offer->chunk) != offer->size) {
        close(fd);
        return NULL;
    }
    void *base = mmap(NULL, offer->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return NULL;
    if (coll_shm_check_header(base, offer->size, offer->n, offer->size, offer->chunk,
                              offer->nonce) != 0) {
        munmap(base, offer->size);
        return NULL;
    }
    coll_shm_t *self = calloc(1, sizeof *self);
    if (!self) {
        munmap(base, offer->size);
        *err = GIMPI_ENOMEM;
        return NULL;
    }
    self->base = base;
    self->size = offer->size;
    self->fd = -1;
    self->n = offer->n;
    self->pos = pos;
    self->chunk = offer->chunk;
    memcpy(self->nonce, offer->nonce, 16);
    memcpy(self->hdr, base, sizeof self->hdr);
    s_tune(self);
    *err = 0;
    return self;
}

/*  Closes the creator's descriptor. */
void coll_shm_close_fd(coll_shm_t *self)
{
    if (self && self->fd >= 0) {
        close(self->fd);
        self->fd = -1;
    }
}

/*  Unmaps and frees. */
void coll_shm_destroy(coll_shm_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    coll_shm_t *self = *self_p;
    if (self->base)
        munmap(self->base, self->size);
    if (self->fd >= 0)
        close(self->fd);
    free(self);
    *self_p = NULL;
}

/*  Installs the liveness callback. */
void coll_shm_set_alive(coll_shm_t *self, coll_shm_alive_fn fn, void *arg)
{
    if (self) {
        self->alive = fn;
        self->alive_arg = arg;
    }
}

/*  The segment's base. */
void *coll_shm_base(coll_shm_t *self)
{
    return self ? self->base : NULL;
}

/* ------------------------------------------------------------------ words and waiting */

static word_t *s_word(coll_shm_t *self, size_t off)
{
    return (word_t *)(void *)(self->base + off);
}

/*  Member j's barrier arrival counter, its reduce progress, its reduce statuses. */
static word_t *s_arrive(coll_shm_t *self, int j)
{
    return s_word(self, OFF_MEMBERS + (size_t)j * 2 * LINE);
}

static word_t *s_progress(coll_shm_t *self, int j)
{
    return s_word(self, OFF_MEMBERS + ((size_t)j * 2 + 1) * LINE);
}

static int32_t *s_status(coll_shm_t *self, int j, uint32_t chunk)
{
    return (int32_t *)(void *)(self->base + OFF_MEMBERS + ((size_t)j * 2 + 1) * LINE + 8
                               + 4 * (chunk & 1));
}

/*  Member j's "I sent a stamp" flag of barrier episode or reduce operation k (two
 *  alternating: nobody can be two operations ahead of a reader). */
static uint32_t *s_flag(coll_shm_t *self, int j, int reduce, uint32_t k)
{
    size_t line = OFF_MEMBERS + ((size_t)j * 2 + (reduce ? 1 : 0)) * LINE;
    return (uint32_t *)(void *)(self->base + line + (reduce ? 16 : 8) + 4 * (k & 1));
}

/*  Member j's reduce slot for chunk (two per member, alternating). */
static uint8_t *s_slot(coll_shm_t *self, int j, uint32_t chunk)
{
    size_t data = self->size - (size_t)self->n * 2 * self->chunk;
    return self->base + data + ((size_t)j * 2 + (chunk & 1)) * self->chunk;
}

static uint32_t *s_broken(coll_shm_t *self)
{
    return (uint32_t *)(void *)(self->base + OFF_BROKEN);
}

/*  Marks the segment broken. */
void coll_shm_break(coll_shm_t *self)
{
    if (self && self->base)
        __atomic_store_n(s_broken(self), 1, __ATOMIC_SEQ_CST);
}

/*  Wakes the sleepers of w, if any (after w moved). */
static void s_wake(word_t *w)
{
    if (__atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST))
        syscall(SYS_futex, &w->v, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/*  Moves w to v and wakes its sleepers. */
static void s_post(word_t *w, uint32_t v)
{
    __atomic_store_n(&w->v, v, __ATOMIC_SEQ_CST);
    s_wake(w);
}

/*  Adds one to w and wakes its sleepers. */
static void s_bump(word_t *w)
{
    __atomic_add_fetch(&w->v, 1, __ATOMIC_SEQ_CST);
    s_wake(w);
}

/*  0 while the segment is sound: else GIMPI_ESYSERR (broken) or GIMPI_EBADMSG (the header
 *  changed under us; the segment is then marked broken). */
static int s_sound(coll_shm_t *self)
{
    if (__atomic_load_n(s_broken(self), __ATOMIC_ACQUIRE))
        return GIMPI_ESYSERR;
    if (memcmp(self->base, self->hdr, sizeof self->hdr) != 0) {  /* as mapped: checked then */
        fprintf(stderr, "gimpi: corrupt shared-memory header of a group's segment: "
                        "the group's operations fail\n");
        coll_shm_break(self);
        return GIMPI_EBADMSG;
    }
    return 0;
}

/*  Asks the liveness callback about every other member: GIMPI_ESYSERR (and broken) when
 *  one has gone. */
static int s_all_alive(coll_shm_t *self)
{
    for (int j = 0; self->alive && j < self->n; j++)
        if (j != self->pos && self->alive(self->alive_arg, j) == 0) {
            coll_shm_break(self);
            return GIMPI_ESYSERR;
        }
    return 0;
}

/*  Classifies w's value against target: 1 reached, 0 not yet, < 0 corrupt (further ahead
 *  than slack allows). */
static int s_reached(coll_shm_t *self, word_t *w, uint32_t target, uint32_t slack)
{
    int32_t d = (int32_t)(__atomic_load_n(&w->v, __ATOMIC_ACQUIRE) - target);
    if (d > (int32_t)slack) {
        fprintf(stderr, "gimpi: corrupt counter in a group's shared-memory segment: "
                        "the group's operations fail\n");
        coll_shm_break(self);
        return GIMPI_EBADMSG;
    }
    return d >= 0;
}

/*  Waits until w reaches target (modulo 2^32; at most slack beyond): spins for spin_us
 *  (yielding when members outnumber cores), then sleeps on the futex SLEEP_MS at a time,
 *  watching the broken flag, the header and, every LIVE_MS, the other members' liveness. */
static int s_wait(coll_shm_t *self, word_t *w, uint32_t target, uint32_t slack)
{
    int r = s_reached(self, w, target, slack);
    if (r)
        return r < 0 ? r : 0;
    int64_t start = 0, spin_end = 0;  /* the clock is read from the 16th look on (a look
                                         costs less than reading it) */
    for (unsigned i = 1;; i++) {
        r = s_reached(self, w, target, slack);
        if (r)
            return r < 0 ? r : 0;
        if (self->over || i > (unsigned)self->pauses)  /* the awaited may be queued on our core */
            sched_yield();
        else
            CPU_RELAX();
        if (i > (unsigned)self->pauses || (i & 15) == 0) {
            if (__atomic_load_n(s_broken(self), __ATOMIC_RELAXED))
                return GIMPI_ESYSERR;
            int64_t now = gimpi_now_us();
            if (!start) {
                start = now;
                spin_end = start + self->spin_us;
            } else if (now >= spin_end)
                break;
        }
    }
    int64_t next_live = start + LIVE_MS * 1000;
    for (;;) {
        r = s_reached(self, w, target, slack);  /* reached first: once it is, the call is
                                                   done for the others, who may already
                                                   be changing the segment */
        if (r)
            return r < 0 ? r : 0;
        int rc = s_sound(self);
        if (rc)
            return rc;
        __atomic_add_fetch(&w->sleepers, 1, __ATOMIC_SEQ_CST);
        uint32_t v = __atomic_load_n(&w->v, __ATOMIC_SEQ_CST);
        if ((int32_t)(v - target) < 0) {
            struct timespec ts = { 0, SLEEP_MS * 1000000L };
            syscall(SYS_futex, &w->v, FUTEX_WAIT, v, &ts, NULL, 0);
        }
        __atomic_sub_fetch(&w->sleepers, 1, __ATOMIC_SEQ_CST);
        r = s_reached(self, w, target, slack);
        if (r)
            return r < 0 ? r : 0;
        if (gimpi_now_us() >= next_live) {
            next_live = gimpi_now_us() + LIVE_MS * 1000;
            rc = s_all_alive(self);
            if (rc)
                return rc;
        }
    }
}

/* ------------------------------------------------------------------ barrier */

static int s_barrier_wait(coll_shm_t *self, uint32_t e, int k, int j, int n);

/*  Combining tree over the arrival counters: member j waits until its children (j*k+1 ..
 *  j*k+k) have all arrived, adds one to its parent's counter, and waits for the release
 *  generation, which member 0 moves once everybody is in.  With k = n-1 it is one counter.
 *  Two members exchange flags instead (the dissemination's single round): one cache-line
 *  transfer each way instead of an arrival and a release, and the one who leaves first may
 *  post its next arrival at once, so two members sharing a core switch half as often. */
int coll_shm_barrier(coll_shm_t *self, int flag, int *flags)
{
    if (!self)
        return GIMPI_EBADPARAM;
    int rc = s_sound(self);
    if (rc)
        return rc;
    uint32_t e = ++self->episodes;
    int k = self->radix, j = self->pos, n = self->n;
    __atomic_store_n(s_flag(self, j, 0, e), (uint32_t)flag, __ATOMIC_RELAXED);
    rc = s_barrier_wait(self, e, k, j, n);
    for (int i = 0; rc == 0 && flags && i < n; i++)
        flags[i] = i != j && __atomic_load_n(s_flag(self, i, 0, e), __ATOMIC_RELAXED);
    return rc;
}

/*  The barrier's meeting itself (episode e, radix k, position j of n). */
static int s_barrier_wait(coll_shm_t *self, uint32_t e, int k, int j, int n)
{
    int rc = 0;
    if (n == 2) {                       /* an exchange: each posts its own flag, waits the other's */
        s_post(s_arrive(self, j), e);
        return s_wait(self, s_arrive(self, 1 - j), e, 1);
    }
    int first = j * k + 1, kids = first < n ? (n - first < k ? n - first : k) : 0;
    if (kids)
        rc = s_wait(self, s_arrive(self, j), e * (uint32_t)kids, 0);
    if (rc)
        return rc;
    word_t *gen = s_word(self, OFF_GEN);
    if (j == 0) {                       /* everybody is in: the barrier is done for all, so
                                           nothing checked after the post may fail it here
                                           alone (a member may already be in its next call) */
        s_post(gen, e);
        return 0;
    }
    s_bump(s_arrive(self, (j - 1) / k));
    return s_wait(self, gen, e, 0);
}

/* ------------------------------------------------------------------ reduce */

/*  The reduce's part of member pos for one chunk (global number s) of cnt elements at
 *  data + off: into its slot (or, for position 0 as root, in place), the children's
 *  partial results combined in instance order, progress posted; the root copies the
 *  result out.  Returns the status so far. */
static int s_reduce_chunk(coll_shm_t *self, coll_shm_combine_fn fn, void *arg, uint8_t *data,
                          size_t len, int cnt, int rootpos, uint32_t s, int st)
{
    int pos = self->pos, n = self->n, parent = -1;
    for (int w = 1; w < n; w <<= 1)
        if (pos & w) {
            parent = pos - w;
            break;
        }
    word_t *out = s_word(self, OFF_OUT);
    uint8_t *work = data;
    if (pos != 0 || rootpos != 0) {     /* may the slot be reused? (chunk s-2 consumed) */
        int rc = parent >= 0 ? s_wait(self, s_progress(self, parent), s - 1, 1)
                             : s_wait(self, out, s - 1, 1);
        if (rc)
            return rc;
        work = s_slot(self, pos, s);
        memcpy(work, data, len);
    }
    for (int w = 1; w < n && !(pos & w); w <<= 1) {
        if (pos + w >= n)
            continue;
        int c = pos + w;
        int rc = s_wait(self, s_progress(self, c), s + 1, 1);
        if (rc)
            return rc;
        int32_t cst = __atomic_load_n(s_status(self, c, s), __ATOMIC_ACQUIRE);
        st = st ? st : cst;
        if (st == 0)
            st = fn(arg, work, s_slot(self, c, s), cnt);
    }
    *s_status(self, pos, s) = st;
    s_post(s_progress(self, pos), s + 1);
    if (pos == 0 && rootpos == 0)
        s_post(out, s + 1);
    else if (pos == rootpos) {
        int rc = s_wait(self, s_progress(self, 0), s + 1, 1);
        if (rc)
            return rc;
        int32_t rst = __atomic_load_n(s_status(self, 0, s), __ATOMIC_ACQUIRE);
        st = st ? st : rst;
        memcpy(data, s_slot(self, 0, s), len);
        s_post(out, s + 1);
    }
    return st;
}

/*  The flags of the members whose parts this member has heard from in reduce op: all for
 *  the root (and for everybody with wait_all, whose outcome comes from the root), else its
 *  subtree (positions pos+1 .. pos+lowest set bit of pos - 1), and position 0's subtree
 *  is everybody.  Read once this member's part is done: a member can be one operation
 *  ahead at most, so the alternating flag still holds op's. */
static void s_heard(coll_shm_t *self, uint32_t op, int rootpos, int wait_all, int *flags)
{
    int pos = self->pos, n = self->n, hi = n;
    if (pos != 0 && pos != rootpos && !wait_all)
        hi = pos + (pos & -pos) < n ? pos + (pos & -pos) : n;
    int lo = pos == rootpos || wait_all ? 0 : pos;
    for (int i = 0; flags && i < n; i++)
        flags[i] = i != pos && i >= lo && i < hi
                   && __atomic_load_n(s_flag(self, i, 1, op), __ATOMIC_RELAXED);
}

/*  Reduce chunk by chunk (see coll_shm.h). */
int coll_shm_reduce(coll_shm_t *self, coll_shm_combine_fn fn, void *arg, void *data, int count,
                    size_t esize, int rootpos, int wait_all, int flag, int *flags)
{
    if (!self || !fn || !data || count <= 0 || esize == 0 || esize > self->chunk || rootpos < 0
        || rootpos >= self->n)
        return GIMPI_EBADPARAM;
    int rc = s_sound(self);
    if (rc)
        return rc;
    int per = (int)(self->chunk / esize);
    int nc = (count + per - 1) / per, st = 0;
    uint32_t op = ++self->reduces;
    __atomic_store_n(s_flag(self, self->pos, 1, op), (uint32_t)flag, __ATOMIC_RELAXED);
    for (int i = 0; i < nc; i++) {
        int cnt = i == nc - 1 ? count - i * per : per;
        st = s_reduce_chunk(self, fn, arg, (uint8_t *)data + (size_t)i * per * esize,
                            (size_t)cnt * esize, cnt, rootpos, self->chunks++, st);
        if (st == GIMPI_ESYSERR || st == GIMPI_EBADMSG) {
            self->chunks += (uint32_t)(nc - i - 1);
            return st;
        }
    }
    s_heard(self, op, rootpos, wait_all, flags);
    if (!wait_all)
        return st;
    word_t *fin = s_word(self, OFF_FIN);
    int32_t *fst = (int32_t *)(void *)(self->base + OFF_FIN + 8);
    uint32_t f = ++self->fins;
    if (self->pos == rootpos) {
        __atomic_store_n(fst, st, __ATOMIC_RELEASE);
        s_post(fin, f);
        return st;
    }
    rc = s_wait(self, fin, f, 0);
    return rc ? rc : __atomic_load_n(fst, __ATOMIC_ACQUIRE);
}
