/*  pvm_mbox.c — PVM 3.4's message box: pvm_putinfo, pvm_recvinfo, pvm_delinfo,
 *  pvm_getmboxinfo, and PVM 3.3's pvm_insert, pvm_lookup, pvm_delete built on it as
 *  libpvm 3.4 builds them (an int packed in a persistent, multi-instance entry), over
 *  groupd's box (gimpi_mbox_* of gimpi_group.h, through the task's registered groupd
 *  connection), so every task of the virtual machine shares it.  Results, error codes and
 *  which errors print under PvmAutoErr are PVM 3.4.6's (measured: t/pvm_mbox_cmp.sh):
 *  the put/delete/read calls return the entry's index, pvm_recvinfo a new receive buffer
 *  that becomes the active one (the previous one is freed, as libpvm does), and
 *  PvmDenied / PvmExists / PvmNotFound are answers, set in pvm_errno without a message.
 *  Where PVM fails (a bad bufid leaves pvm_putinfo waiting for ever for its pvmd's reply),
 *  gimpi answers PvmBadParam / PvmNoSuchBuf: see doc/pvm-differences.md, "Message box".
 */
#include "pvm3.h"
#include "pvm/pvm_ctx.h"
#include "pvm/pvm_tev.h"
#include "pvm/pvm_buf.h"
#include "gimpi.h"

#include <stddef.h>
#include <stdlib.h>

/*  struct pvmmboxinfo is gimpi_mbox_class_t under PVM's names: the list is handed over
 *  as it comes. */
_Static_assert(sizeof(struct pvmmboxinfo) == sizeof(gimpi_mbox_class_t)
               && offsetof(struct pvmmboxinfo, mi_name) == offsetof(gimpi_mbox_class_t, name)
               && offsetof(struct pvmmboxinfo, mi_nentries)
                  == offsetof(gimpi_mbox_class_t, nentries)
               && offsetof(struct pvmmboxinfo, mi_indices)
                  == offsetof(gimpi_mbox_class_t, indices)
               && offsetof(struct pvmmboxinfo, mi_owners) == offsetof(gimpi_mbox_class_t, owners)
               && offsetof(struct pvmmboxinfo, mi_flags) == offsetof(gimpi_mbox_class_t, flags),
               "struct pvmmboxinfo and gimpi_mbox_class_t differ");

/*  The enrolled task's context and groupd connection: NULL with *rc set (PvmNoMem, an
 *  enrolment error, PvmSysErr without groups). */
static gimpi_groups_t *s_groups(pvm_ctx_t **ctx, int *rc)
{
    *ctx = pvm_ctx_current();
    if (!*ctx) {
        *rc = PvmNoMem;
        return NULL;
    }
    if ((*rc = pvm_ctx_enrol(*ctx)) < 0)
        return NULL;
    void *impl;
    const pvm_transport_ops_t *ops = pvm_ctx_ops(*ctx, &impl);
    gimpi_groups_t *g = ops && ops->groups ? ops->groups(impl) : NULL;
    *rc = g ? 0 : PvmSysErr;
    return g;
}

/*  The result of call fn: errors that are answers (a and b) set pvm_errno silently,
 *  others also print under PvmAutoErr (as libpvm's lpvmerr). */
static int s_result(pvm_ctx_t *ctx, const char *fn, int rc, int a, int b)
{
    if (rc >= 0)
        return rc;
    if (rc == a || rc == b)
        return pvm_ctx_error(ctx ? ctx : pvm_ctx_current(), rc, PVM_CAUSE_GROUPD);
    return pvm_ctx_fail_in(ctx ? ctx : pvm_ctx_current(), fn, rc, PVM_CAUSE_GROUPD);
}

/*  Puts the bytes of buf (req -1: pvm_putinfo's index; else PVM 3.3's). */
static int s_put(pvm_ctx_t **ctx, const char *name, int req, pvm_buf_t *buf, int flags)
{
    int rc;
    gimpi_groups_t *g = s_groups(ctx, &rc);
    if (!g)
        return rc;
    size_t len;
    const uint8_t *bytes = pvm_buf_bytes(buf, &len);
    if (!bytes)
        return PvmNoMem;
    int enc = pvm_buf_encoding(buf);
    return gimpi_mbox_put(g, name, req, flags, enc == PVM_BUF_INPLACE ? PVM_BUF_RAW : enc,
                          bytes, len);
}

/*  After a put: the task is listed in the box, so a task of another job may look it up
 *  and call; its receives from any source wait for that, as a PVM server's do. */
static int s_listed(pvm_ctx_t *ctx, int rc)
{
    void *impl = NULL;
    const pvm_transport_ops_t *ops = rc >= 0 && ctx ? pvm_ctx_ops(ctx, &impl) : NULL;
    gimpi_t *task = ops && ops->task ? ops->task(impl) : NULL;
    if (task && gimpi_msg(task))
        gimpi_msg_set_listed(gimpi_msg(task));
    return rc;
}

/*  Stores a message under name; returns the index it got. */
int pvm_putinfo(char *name, int bufid, int flags)
{
    PVM_TEV_TOP_S(TEV_PUTINFO, name, NULL, pvm_putinfo(name, bufid, flags), 0, flags, bufid);
    pvm_ctx_t *ctx = pvm_ctx_current();
    pvm_buf_t *buf = ctx && bufid > 0 ? pvm_ctx_buf(ctx, bufid) : NULL;
    int rc = !name || !*name || bufid < 0 ? PvmBadParam
           : !ctx ? PvmNoMem
           : !buf ? PvmNoSuchBuf
           : s_listed(ctx, s_put(&ctx, name, -1, buf, flags));
    return s_result(ctx, "pvm_putinfo", rc, PvmDenied, PvmExists);
}

/*  Reads the entry <name, index> into a new buffer (*bufid, not made active); the index
 *  read, or an error. */
static int s_get(pvm_ctx_t **ctx, const char *name, int index, int flags, int *bufid)
{
    int rc;
    gimpi_groups_t *g = s_groups(ctx, &rc);
    if (!g)
        return rc;
    int enc;
    void *data;
    size_t len;
    int found = gimpi_mbox_get(g, name, index, flags, &enc, &data, &len);
    if (found < 0)
        return found;
    pvm_buf_t *buf = pvm_buf_adopt(enc, data, len);
    if (!buf) {
        free(data);
        return PvmNoMem;
    }
    *bufid = pvm_ctx_add_buf(*ctx, buf, 0, 0, PvmBaseContext);
    return *bufid < 0 ? *bufid : found;
}

/*  Reads an entry into a new receive buffer, which becomes the active one (the active
 *  receive buffer is freed first, as libpvm does, whatever the outcome). */
int pvm_recvinfo(char *name, int index, int flags)
{
    PVM_TEV_TOP_S(TEV_GETINFO, name, NULL, pvm_recvinfo(name, index, flags), index, flags);
    pvm_ctx_t *ctx = NULL;
    int bufid = 0, rc;
    if (!name || !*name || index < 0)
        rc = PvmBadParam;
    else if (!(ctx = pvm_ctx_current()))
        rc = PvmNoMem;
    else {
        pvm_ctx_free_buf(ctx, pvm_ctx_rbuf(ctx));
        rc = s_get(&ctx, name, index, flags, &bufid);
        if (rc >= 0) {
            pvm_ctx_set_rbuf(ctx, bufid);
            rc = bufid;
        }
    }
    return s_result(ctx, "pvm_recvinfo", rc, PvmNotFound, PvmNotFound);
}

/*  Deletes the entry <name, index>; returns the index. */
int pvm_delinfo(char *name, int index, int flags)
{
    PVM_TEV_TOP_S(TEV_DELINFO, name, NULL, pvm_delinfo(name, index, flags), index, flags);
    (void)flags;                        /* (none defined, as in PVM) */
    pvm_ctx_t *ctx = NULL;
    int rc;
    if (!name || !*name || index < 0)
        rc = PvmBadParam;
    else {
        gimpi_groups_t *g = s_groups(&ctx, &rc);
        if (g)
            rc = gimpi_mbox_del(g, name, index);
    }
    return s_result(ctx, "pvm_delinfo", rc, PvmDenied, PvmNotFound);
}

/*  The classes whose names match pattern; the array is the library's until the next call. */
int pvm_getmboxinfo(char *pattern, int *nclasses, struct pvmmboxinfo **classes)
{
    PVM_TEV_TOP_S(TEV_GETMBOXINFO, pattern, NULL, pvm_getmboxinfo(pattern, nclasses, classes));
    pvm_ctx_t *ctx;
    int rc;
    gimpi_groups_t *g = s_groups(&ctx, &rc);
    if (ctx)
        pvm_ctx_keep(ctx, PVM_CTX_KEPT_MBOX, NULL);
    if (g) {
        gimpi_mbox_class_t *cl;
        int n;
        rc = gimpi_mbox_list(g, pattern ? pattern : "", &cl, &n);
        if (rc >= 0) {
            pvm_ctx_keep(ctx, PVM_CTX_KEPT_MBOX, cl);
            if (classes)
                *classes = (struct pvmmboxinfo *)(void *)cl;
            if (nclasses)
                *nclasses = n;
            rc = 0;
        }
    }
    return s_result(ctx, "pvm_getmboxinfo", rc, 0, 0);
}

/*  PVM 3.3: stores data under <name, req> (req -1: the first free index), persistent. */
int pvm_insert(char *name, int req, int data)
{
    PVM_TEV_TOP_S(TEV_INSERT, name, NULL, pvm_insert(name, req, data), req, data);
    pvm_ctx_t *ctx = pvm_ctx_current();
    int rc = PvmBadParam;
    if (name && *name && req >= -1) {
        pvm_buf_t *buf = pvm_buf_new(PVM_BUF_DEFAULT);
        rc = !buf || !ctx ? PvmNoMem : pvm_buf_pack(buf, PVM_INT, &data, 1, 1);
        if (rc == 0)
            rc = s_listed(ctx, s_put(&ctx, name, req, buf, PvmMboxDefault
                                     | PvmMboxMultiInstance | PvmMboxPersistent));
        pvm_buf_destroy(&buf);
    }
    return s_result(ctx, "pvm_insert", rc, PvmDupEntry, PvmDupEntry);
}

/*  PVM 3.3: the data of <name, req> (req -1: the first entry); returns its index.  The
 *  active receive buffer stays. */
int pvm_lookup(char *name, int req, int *datap)
{
    PVM_TEV_TOP_S(TEV_LOOKUP, name, NULL, pvm_lookup(name, req, datap), req);
    pvm_ctx_t *ctx = NULL;
    int rc = PvmBadParam;
    if (name && *name && req >= -1) {
        int bufid = 0;
        rc = s_get(&ctx, name, req < 0 ? 0 : req, req < 0 ? PvmMboxFirstAvail : 0, &bufid);
        pvm_buf_t *buf = bufid > 0 ? pvm_ctx_buf(ctx, bufid) : NULL;
        if (rc >= 0 && datap && buf)
            pvm_buf_unpack(buf, PVM_INT, datap, 1, 1);
        if (bufid > 0)
            pvm_ctx_free_buf(ctx, bufid);
    }
    return s_result(ctx, "pvm_lookup", rc, PvmNoEntry, PvmNoEntry);
}

/*  PVM 3.3: deletes <name, req>; returns the index. */
int pvm_delete(char *name, int req)
{
    PVM_TEV_TOP_S(TEV_DELETE, name, NULL, pvm_delete(name, req), req);
    if (!name || !*name || req < 0)
        return s_result(NULL, "pvm_delete", PvmBadParam, 0, 0);
    return pvm_delinfo(name, req, PvmMboxDefault);
}
