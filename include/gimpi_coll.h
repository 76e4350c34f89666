/*  gimpi_coll.h — group operations (barrier, bcast, reduce, gather, scatter) on the data
 *  plane, over a *view*: a snapshot of a group's membership taken at the call (group name,
 *  version, instance slots with their tids, the caller's instance).  The bytes travel task
 *  to task as IMPI packets on the collective context (GIMPI_CID_COLL), never through
 *  groupd.  Every member of a view must call barrier/reduce/gather/scatter with an equal
 *  view, in the same order; bcast is one-sided (receivers just receive an ordinary message).
 *  Semantics are PVM's (pvm-groups.md §4–6) with its bugs fixed; see doc/collectives.md for
 *  the algorithms, tags and what differs from PVM.
 *
 *  Every call returns 0 or a negative GIMPI_E* code: GIMPI_ENOTINGROUP (the caller is not
 *  a member where it must be), GIMPI_ENOINST (a hole in the instance numbers, a missing
 *  root, a sole member broadcasting — the same answer at every participant, nobody waits),
 *  GIMPI_EBADPARAM (bad arguments, or a user reduce function that set *info < 0: every
 *  caller gets it), GIMPI_ESYSERR (a participant died or the context timeout ran out),
 *  GIMPI_EBADMSG (the members' shared memory was found corrupt).
 */
#ifndef GIMPI_COLL_H
#define GIMPI_COLL_H

#include "gimpi_export.h"
#include "gimpi_group.h"
#include "gimpi_msg.h"
#include "gimpi_ops.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gimpi_coll_t gimpi_coll_t;

/*  A snapshot of a group: instance i is tids[i] (0 = a hole), 0 <= i < ninst. */
typedef struct {
    char *name;                 /* group name (owned) */
    uint64_t version;           /* groupd's membership version at the snapshot */
    int ninst;                  /* instance slots */
    int *tids;                  /* tids in instance order (owned), 0 = hole */
    int me;                     /* the caller's instance, -1 when not a member */
} gimpi_view_t;

/*  Creates the collective state of a task over its data plane (not owned). */
GIMPI_EXPORT gimpi_coll_t *gimpi_coll_new(gimpi_msg_t *msg);
/*  Frees it and nulls the pointer. */
GIMPI_EXPORT void gimpi_coll_destroy(gimpi_coll_t **self_p);

/*  Builds a view from ninst tids in instance order (copied; 0 = hole); me = the instance
 *  whose tid is mytid, -1 if none.  NULL on bad arguments or no memory. */
GIMPI_EXPORT
gimpi_view_t *gimpi_view_new(const char *name, uint64_t version, const int *tids, int ninst,
                             int mytid);
/*  Frees a view and nulls the pointer. */
GIMPI_EXPORT void gimpi_view_destroy(gimpi_view_t **self_p);
/*  Number of members (non-hole slots) of a view. */
GIMPI_EXPORT int gimpi_view_size(const gimpi_view_t *view);

/*  Barrier over the members of the view.  Members that all share the caller's machine and
 *  user meet in shared memory (doc/collectives.md, "Within a node"); otherwise up to 64
 *  members a star through the lowest instance, above a dissemination barrier. */
GIMPI_EXPORT int gimpi_coll_barrier(gimpi_coll_t *self, const gimpi_view_t *view);

/*  Sends len bytes to every member of the view except the caller (who need not be a
 *  member), as one ordinary message in context cid with the given tag (source = the
 *  caller).  Large messages go down a binomial tree of the receivers, chunk by chunk; the
 *  receivers' engines forward without their programs calling anything.  Returns once buf
 *  may be reused.  The only member broadcasting: GIMPI_ENOINST, nothing sent. */
GIMPI_EXPORT
int gimpi_coll_bcast(gimpi_coll_t *self, const gimpi_view_t *view, uint64_t cid, int tag,
                     const void *buf, size_t len);

/*  Reduces count elements of datatype (a PVM datatype, gimpi_ops.h) from every member into
 *  data at instance root.  op is a gimpi_op_t (GIMPI_OP_MAX …) when fn is NULL, else fn is
 *  called as fn(&datatype, x, y, &count, &info).  The bracketing is fixed by instance order,
 *  whatever the timing: R(j,2w) = R(j,w) ∘ R(j+w,w), the result R(0,n) is moved to root
 *  (in shared memory too, when the members share the caller's machine: the same bits).
 *  On non-roots data is left holding a partial result.  With a user function every caller
 *  waits for the outcome, so an error (info < 0 anywhere) reaches every caller; with a
 *  predefined op non-roots return once their part is sent. */
GIMPI_EXPORT
int gimpi_coll_reduce(gimpi_coll_t *self, const gimpi_view_t *view, int op, gimpi_reduce_fn fn,
                      void *data, int count, int datatype, int tag, int root);

/*  Gather: instance i's count elements land at result + i*count*size on root (result
 *  needed only there).  Non-roots return once their data is sent. */
GIMPI_EXPORT
int gimpi_coll_gather(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                      const void *data, int count, int datatype, int tag, int root);

/*  Scatter: root sends data + i*count*size to instance i, which receives it into result
 *  (needed everywhere; data only at root, and left alone). */
GIMPI_EXPORT
int gimpi_coll_scatter(gimpi_coll_t *self, const gimpi_view_t *view, void *result,
                       const void *data, int count, int datatype, int tag, int root);

/*  Group-level operations: the view is the group's membership at the call, from the groups
 *  cache (gimpi_group_snapshot; one groupd round trip when the cache is not current).  They
 *  need groupd's tids to be the data plane's (GIMPI_ESYSERR otherwise).  A NULL or empty
 *  name gives GIMPI_ENULLGROUP, an unknown group GIMPI_ENOGROUP.
 *
 *  barrier: count -1 or the group's size meet on the data plane when the membership is
 *  unchanged since this task's last barrier that groupd arbitrated (a member whose count
 *  differs from the lowest instance's gets GIMPI_EMISMATCH at once and is not counted);
 *  the first barrier after a join or leave, and any other count, are arbitrated by groupd
 *  with all of PVM's rules (first arrival fixes the count, count > size waits for joins,
 *  ...).  count 0 or < -1: GIMPI_EBADPARAM.  A frozen group that loses a member:
 *  GIMPI_ENOGROUP. */
GIMPI_EXPORT
int gimpi_coll_group_barrier(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                             int count);
/*  bcast to the group's members now (the caller need not be one). */
GIMPI_EXPORT
int gimpi_coll_group_bcast(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                           uint64_t cid, int tag, const void *buf, size_t len);
/*  reduce, gather, scatter over the group's members now (the caller must be one). */
GIMPI_EXPORT
int gimpi_coll_group_reduce(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                            int op, gimpi_reduce_fn fn, void *data, int count, int datatype,
                            int tag, int root);
GIMPI_EXPORT
int gimpi_coll_group_gather(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                            void *result, const void *data, int count, int datatype, int tag,
                            int root);
GIMPI_EXPORT
int gimpi_coll_group_scatter(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                             void *result, const void *data, int count, int datatype, int tag,
                             int root);
/*  The view of a group now (*view to be destroyed by the caller); returns the number of
 *  members or an error. */
GIMPI_EXPORT
int gimpi_coll_group_view(gimpi_coll_t *self, gimpi_groups_t *groups, const char *group,
                          gimpi_view_t **view);

#ifdef __cplusplus
}
#endif
#endif
