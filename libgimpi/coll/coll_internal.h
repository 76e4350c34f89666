/*  coll_internal.h — the private state of the group operations (gimpi_coll_t, the views a
 *  group's entry keeps, the shared-memory link of a view) and the functions the files of
 *  the group operations share.  The files build on each other in this order, each using
 *  only those above it (no call cycle, t/layers.sh):
 *    gimpi_coll.c    the state, views, tags and the scratch buffer
 *    coll_node.c     the node glue: a view's shared-memory segments and causal stamps
 *    coll_barrier.c  barrier and bcast over a view
 *    coll_reduce.c   reduce, gather and scatter over a view
 *    coll_group.c    the group-level calls: a group's view kept per membership version
 *  The messaging helpers are inline here: they are one call into the data plane each.
 */
#ifndef GIMPI_COLL_INTERNAL_H
#define GIMPI_COLL_INTERNAL_H

#include "gimpi_coll.h"
#include "gimpi.h"            /* the GIMPI_E* codes */
#include "net/gimpi_msg_fwd.h"
#include "gimpi_ops.h"
#include "coll/impi_coll.h"
#include "coll/coll_shm.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define STAR_MAX 64                 /* barrier: star up to this many members */
#define CHUNK (128 * 1024)          /* reduce pipeline unit (one eager packet at the default length) */
#define WIN 8                       /* chunks received ahead per child */
#define BCAST_TREE_MIN (16 * 1024)  /* bcasts from this size ... */
#define BCAST_TREE_RECV 16          /* ... to this many receivers go through the tree */
#define BCAST_SEND_MAX 1024         /* bcasts up to this size: a standard send to each
                                       (written at once when it can be, else buffered),
                                       no request to make, wait for and free */

#define STACK_INTS 64               /* an operation's lists on the stack up to this size */

enum { K_ALIVE = 0, K_BARRIER = 1, K_REDUCE, K_RSTAT, K_GATHER, K_SCATTER, K_RGATHER, K_SHM };

/*  The shared memory of a view's members (coll_shm.h): one segment when they all share
 *  this machine; when they are on several nodes, one segment per node with two members or
 *  more, and the first member of each node leads it on the data plane (hierarchical). */
typedef struct {
    coll_shm_t *seg;                /* this node's segment (NULL: alone on its node) */
    gimpi_coll_t *coll;
    uint64_t seen;                  /* groupd version this task had told the members of */
    int n;                          /* members of the segment (of this node) */
    int pos;                        /* this member's place among them */
    int nlead;                      /* nodes: 1 = every member in the one segment */
    int lead_pos;                   /* this member's place among the leaders, or -1 */
    int *lead;                      /* the leaders' tids, in node order (after tids) */
    int64_t asked_ms;               /* when groupd was last asked about the members ... */
    int asking;                     /* ... and whether this round of questions asks it */
    int tids[];                     /* the segment's members in instance order */
} shm_link_t;

/*  A group's view kept for its membership version, shared by the calls that use it: freed
 *  when the last of them and the group's entry let go of it. */
typedef struct {
    gimpi_view_t *v;
    int refs;
    int n, pos;                     /* its members and the caller's place (coll_members) */
    int multi;                      /* they span several IMPI clients (coll_clients) */
    int m[];                        /* the members' tids, in instance order */
} cview_t;

typedef struct seq_t {
    struct seq_t *next;
    cview_t *view;                  /* the group's view of the version last used, or NULL */
    uint64_t version;               /* the membership version seq counts from */
    uint64_t synced;                /* version at this task's last groupd barrier, + 1 */
    uint32_t seq;
    uint32_t hash;                  /* s_hash of the name */
    int shm_tried;                  /* shm below is settled for shm_version/shm_key */
    uint64_t shm_version;
    uint32_t shm_key;               /* hash of the members' tids */
    shm_link_t *shm;                /* NULL: the members meet over the data plane */
    gimpi_groups_t *groups;         /* the last answer about the group, of this cache ... */
    gimpi_group_snap_t snap;        /* ... (tids NULL), which view holds ... */
    int members;                    /* ... and its member count (s_group_view) */
    char name[];
} seq_t;

struct gimpi_coll_t {
    gimpi_msg_t *msg;
    int star_max;                   /* barrier: star up to this many members */
    size_t chunk;                   /* reduce pipeline unit */
    int win;                        /* reduce: chunks received ahead per child */
    int rsag;                       /* large reduces by reduce-scatter + gather */
    size_t tree_min;                /* bcast: from this size ... */
    int tree_recv;                  /* ... and this many receivers down the forwarding tree */
    int shm;                        /* barrier and reduce through shared memory in a node */
    pthread_mutex_t mu;             /* guards seqs */
    seq_t *seqs;                    /* per group: operations started so far */
    uint8_t *scratch;               /* reduce's receive buffers, kept (no page faults) */
    size_t scratch_size;
    int scratch_busy;
    struct gimpi_trace_t *trace;    /* the task's trace recorder (coll_trace.h), or NULL */
    struct {                        /* the barrier on the data plane under way, if any */
        gimpi_groups_t *groups;     /* NULL: none */
        const char *group;
        int count, noted;           /* noted: groupd was told (gimpi_groups_barrier_note) */
    } dpb;
    struct {                        /* the group operation under way, for the live view
                                       (coll_live.h); op NULL: none */
        const char *op, *group;     /* "pvm_reduce", the caller's group name */
        gimpi_groups_t *groups;
        int arg;                    /* its root instance (a barrier: its count) */
        int published;              /* groupd was told (the end must clear it) */
        int64_t t0_ms;              /* when a wait in shared memory began (0: not seen) */
        int after_ms;               /* GIMPI_STATUS_AFTER (0: no live view) */
    } live;
};

/*  Notes the group operation under way (coll_live.h): three stores, nothing sent. */
static inline void coll_live_begin(gimpi_coll_t *self, const char *op, gimpi_groups_t *groups,
                                   const char *group, int arg)
{
    self->live.op = op;
    self->live.group = group;
    self->live.groups = groups;
    self->live.arg = arg;
    self->live.t0_ms = 0;
}

/*  A group operation blocked in shared memory, asked about now_ms by the segment's
 *  liveness rounds (every 100 ms, the first 100 ms in): groupd is told once it has
 *  waited GIMPI_STATUS_AFTER (that wait never reaches the data plane's status hook). */
void coll_live_tick(gimpi_coll_t *self, int64_t now_ms);

/*  The operation has returned: groupd is told so if it was told it waited. */
void coll_live_end(gimpi_coll_t *self);

/* ------------------------------------------------------------------ messaging helpers */

/*  Records one of the collectives' own transfers (COLL_SEND): op (NULL: named by the
 *  tag's kind), the peer (-1: the node's shared segment), bytes and receivers. */
void coll_trace_send(gimpi_coll_t *self, const char *op, int tag, int dst, size_t bytes, int n);

/*  Starts a send on the collective context. */
static inline int coll_isend(gimpi_coll_t *self, int tid, int tag, const void *buf, size_t len,
                             gimpi_msg_req_t **req)
{
    if (__builtin_expect(self->trace != NULL, 0))
        coll_trace_send(self, NULL, tag, tid, len, 1);
    return gimpi_msg_isend_cid(self->msg, GIMPI_CID_COLL, tid, tag, buf, len, 0, req);
}

/*  Posts a receive on the collective context. */
static inline int coll_irecv(gimpi_coll_t *self, int tid, int tag, void *buf, size_t size,
                             gimpi_msg_req_t **req)
{
    return gimpi_msg_irecv_cid(self->msg, GIMPI_CID_COLL, tid, tag, buf, size, req);
}

/*  Waits for a request (if any); a failure becomes GIMPI_ESYSERR, a short or long message
 *  (len != want, unless want is SIZE_MAX) GIMPI_EBADMSG. */
static inline int coll_wait(gimpi_coll_t *self, gimpi_msg_req_t **req, size_t want)
{
    if (!*req)
        return GIMPI_ESYSERR;
    gimpi_status_t st;
    int rc = gimpi_msg_wait(self->msg, req, &st);
    if (rc == GIMPI_EOVERFLOW)
        return GIMPI_EBADMSG;
    if (rc < 0)
        return GIMPI_ESYSERR;
    if (want != SIZE_MAX && st.len != want)
        return GIMPI_EBADMSG;
    return 0;
}

/*  A blocking send of a small message (waits for its request). */
static inline int coll_send(gimpi_coll_t *self, int tid, int tag, const void *buf, size_t len)
{
    gimpi_msg_req_t *req = NULL;
    int rc = coll_isend(self, tid, tag, buf, len, &req);
    return rc < 0 ? GIMPI_ESYSERR : coll_wait(self, &req, SIZE_MAX);
}

/*  A blocking receive of exactly len bytes. */
static inline int coll_recv(gimpi_coll_t *self, int tid, int tag, void *buf, size_t len)
{
    gimpi_msg_req_t *req = NULL;
    int rc = coll_irecv(self, tid, tag, buf, len, &req);
    return rc < 0 ? GIMPI_ESYSERR : coll_wait(self, &req, len);
}

/*  Worst of two results (the first error wins). */
static inline int coll_worse(int a, int b)
{
    return a ? a : b;
}

/*  n ints for one operation: from buf (STACK_INTS of them, on the caller's stack) when they
 *  fit, else from the heap; zeroed with zero.  NULL without memory. */
static inline int *coll_ints(int *buf, size_t n, int zero)
{
    if (n <= STACK_INTS) {
        if (zero)
            memset(buf, 0, n * sizeof *buf);
        return buf;
    }
    return zero ? calloc(n, sizeof *buf) : malloc(n * sizeof *buf);
}

/*  Gives back what coll_ints took. */
static inline void coll_ints_free(int *p, const int *buf)
{
    if (p != buf)
        free(p);
}

/*  Re-kinds a tag made by coll_next_tag (same operation, another message family). */
static inline int coll_rekind(int tag, int k)
{
    return (int)(((uint32_t)tag & ~(7u << 27)) | ((uint32_t)(k & 7) << 27));
}

/* ------------------------------------------------------------------ gimpi_coll.c */

/*  The data plane's blocked hook while a group barrier runs on the data plane. */
void coll_on_blocked(void *arg);
/*  Unmaps a view's segment and frees its link. */
void coll_link_destroy(shm_link_t **link_p);
/*  Adds a group's entry (coll_entry when it has none; lock held): NULL without memory. */
seq_t *coll_entry_add(gimpi_coll_t *self, const char *name);

/*  The bookkeeping entry of a group, or NULL (lock held; inline: every operation looks). */
static inline seq_t *coll_find(gimpi_coll_t *self, const char *name)
{
    seq_t *s = self->seqs;
    while (s && strcmp(s->name, name) != 0)
        s = s->next;
    return s;
}

/*  coll_find, adding the group's entry when it has none (NULL: no memory). */
static inline seq_t *coll_entry(gimpi_coll_t *self, const char *name)
{
    seq_t *s = coll_find(self, name);
    return s ? s : coll_entry_add(self, name);
}

/*  Tags of a view's operations (coll_tag: advance or not; coll_next_tag: advance). */
int coll_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k, int advance);
int coll_next_tag(gimpi_coll_t *self, const gimpi_view_t *view, int k);
/*  The members in instance order, and the checks every member's call makes. */
int coll_members(const gimpi_view_t *view, int *m, int *pos);
int coll_check_view(const gimpi_view_t *view, int need_full);

/*  The members of a view and the caller's place: a kept view's own list when cv knows it,
 *  else compacted into mbuf (STACK_INTS) or the heap, ninst + 1 ints, zeroed past the
 *  members; NULL without memory.  Give back with coll_ints_free unless cv knew them. */
static inline int *coll_view_members(const gimpi_view_t *view, const cview_t *cv, int *mbuf,
                                      int *n, int *pos)
{
    if (cv && cv->multi >= 0) {
        *n = cv->n;
        *pos = cv->pos;
        return (int *)cv->m;
    }
    int *m = coll_ints(mbuf, (size_t)view->ninst + 1, 1);
    if (m)
        *n = coll_members(view, m, pos);
    return m;
}

/*  The kept scratch buffer of reduce. */
uint8_t *coll_scratch_get(gimpi_coll_t *self, size_t size);
void coll_scratch_put(gimpi_coll_t *self, uint8_t *p);
/*  The IMPI clients of the members. */
int coll_clients(gimpi_coll_t *self, const int *m, int n, int *cl, int *multi);

/* ------------------------------------------------------------------ coll_node.c */

/*  The shared-memory link of a view's members, or NULL (they meet on the data plane). */
shm_link_t *coll_node_link(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                           const int *m, int n, int pos, int tag, int *rc);
/*  Barrier through the segment, stamps included. */
int coll_node_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link, int pos,
                      int tag);
/*  Causal stamps around an operation through shared memory. */
int coll_stamp_out(gimpi_coll_t *self, gimpi_groups_t *groups, shm_link_t *link,
                   const int *to, int nto, int tag);
int coll_stamp_in(gimpi_coll_t *self, shm_link_t *link, const int *flags, int tag);
int coll_stamp_lists(int n, int *tbuf, int *fbuf, int **to, int **flags);

/* ------------------------------------------------------------------ coll_barrier.c */

/*  Barrier over a view, with the groups object and kept view at group level. */
int coll_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view,
                 int count, const cview_t *cv);

/* ------------------------------------------------------------------ coll_reduce.c */

/*  Reduce over a view, with the groups object and kept view at group level. */
int coll_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const gimpi_view_t *view, int op,
                gimpi_reduce_fn fn, void *data, int count, int datatype, int tag, int root,
                const cview_t *cv);
/*  Gather (scatter = 0) or scatter (1) in instance order through instance root. */
int coll_gather_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                        const void *data, int count, int datatype, int tag, int root,
                        int scatter);

#endif
