/*  coll_shm.h — a shared-memory segment for the group operations of the members of a view
 *  that all run on one machine as one user (doc/collectives.md, "Within a node"): barrier
 *  and reduce meet through words in the segment instead of messages.  The first member
 *  makes the segment (memfd_create, so no name is left anywhere), tells the others its pid
 *  and descriptor (an offer, carried by the caller over the data plane), and the others
 *  open /proc/<pid>/fd/<fd> and map it; the segment goes with its last mapping.  Waiting
 *  spins briefly, then sleeps on a futex with a timeout so that the liveness of the other
 *  members is checked (a callback of the caller) and a dead member fails the operation
 *  everywhere.  A header that does not check out, or a counter that no correct member
 *  could have written, is reported (GIMPI_EBADMSG) and never followed.
 */
#ifndef COLL_SHM_H
#define COLL_SHM_H

#include <stddef.h>
#include <stdint.h>

typedef struct coll_shm_t coll_shm_t;

/*  The bytes of an offer (what the creator tells the others). */
#define COLL_SHM_OFFER_SIZE 64

/*  The offer of a segment: where to open it and what it must hold. */
typedef struct {
    uint8_t boot[16];           /* the machine's boot id (another machine: not shareable) */
    uint32_t uid;               /* the creator's user */
    int32_t pid, fd;            /* /proc/<pid>/fd/<fd> */
    int32_t n;                  /* members */
    uint64_t size;              /* segment bytes */
    uint64_t chunk;             /* reduce slot bytes */
    uint8_t nonce[16];          /* also in the header: proves it is the right file */
} coll_shm_offer_t;

/*  0 when member pos has gone (its operations fail), 1 when alive or not known. */
typedef int (*coll_shm_alive_fn)(void *arg, int pos);

/*  Combines y into x over cnt elements (x = x op y); 0 or an error code. */
typedef int (*coll_shm_combine_fn)(void *arg, void *x, const void *y, int cnt);

/*  Makes the segment of n members (the caller is position 0) with reduce slots of chunk
 *  bytes, and fills the offer.  NULL when shared memory cannot be had. */
coll_shm_t *coll_shm_create(int n, size_t chunk, coll_shm_offer_t *offer);
/*  Maps the segment of an offer as member pos; NULL (*err set: GIMPI_ENOTIMPL when not
 *  shareable from here — another machine, another user —, GIMPI_EBADMSG when the file is
 *  not what the offer says). */
coll_shm_t *coll_shm_attach(const coll_shm_offer_t *offer, int pos, int *err);
/*  Closes the creator's descriptor (once every member has mapped the segment). */
void coll_shm_close_fd(coll_shm_t *self);
/*  Unmaps the segment and nulls the pointer. */
void coll_shm_destroy(coll_shm_t **self_p);

/*  The callback asked about the other members while a wait sleeps (every 100 ms). */
void coll_shm_set_alive(coll_shm_t *self, coll_shm_alive_fn fn, void *arg);
/*  Marks the segment broken (every waiter, here and in the other members, then fails). */
void coll_shm_break(coll_shm_t *self);

/*  Barrier of the segment's members: 0, GIMPI_ESYSERR (a member died, the segment is
 *  broken), GIMPI_EBADMSG (corrupt shared state).  flag is published with the arrival;
 *  flags (n entries, or NULL) gets every other member's (what the caller must then take
 *  from them: doc/collectives.md, "Causal stamps"). */
int coll_shm_barrier(coll_shm_t *self, int flag, int *flags);

/*  Reduce of count elements of esize bytes from every member into data at rootpos, with the
 *  binomial bracketing R(j,2w) = R(j,w) op R(j+w,w) chunk by chunk.  wait_all: every
 *  member waits for the outcome (user functions), else non-roots return once their part
 *  is in the segment.  0 or an error code (the combine's, or as the barrier's).  flag and
 *  flags as the barrier's; flags gets those of the members whose parts reached this one
 *  (its subtree; everybody for the root, and for everybody with wait_all). */
int coll_shm_reduce(coll_shm_t *self, coll_shm_combine_fn fn, void *arg, void *data, int count,
                    size_t esize, int rootpos, int wait_all, int flag, int *flags);

/*  Offer codec (fixed little-endian layout); decode returns 0 or GIMPI_EBADMSG. */
/*  The node this process is on, as COLL_SHM_NODE_KEY bytes: the machine's boot id and a
 *  hash of its virtual machine host's name (GIMPI_HOST), so that emulated hosts on one
 *  machine are nodes of their own.  Members with equal keys may share a segment. */
#define COLL_SHM_NODE_KEY 24
void coll_shm_node_key(uint8_t key[COLL_SHM_NODE_KEY]);

void coll_shm_offer_encode(const coll_shm_offer_t *offer, uint8_t buf[COLL_SHM_OFFER_SIZE]);
int coll_shm_offer_decode(const uint8_t *buf, size_t len, coll_shm_offer_t *offer);

/*  Checks a segment header of len bytes against n, size, chunk and nonce: 0 or
 *  GIMPI_EBADMSG (also the fuzz target's entry). */
int coll_shm_check_header(const void *hdr, size_t len, int n, uint64_t size, uint64_t chunk,
                          const uint8_t nonce[16]);

/*  The segment's base (tests corrupt it through this). */
void *coll_shm_base(coll_shm_t *self);

#endif
