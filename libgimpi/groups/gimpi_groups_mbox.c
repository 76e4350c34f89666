/*  gimpi_groups_mbox.c — a task's side of groupd's message box (gimpi_group.h, "The
 *  message box"): one request per call (MBOX_PUT, MBOX_GET, MBOX_DEL, MBOX_LIST; doc/
 *  groupd-protocol.md §3.4).  A read with PvmMboxWaitForInfo waits for its deferred
 *  answer as a barrier does, as long as groupd lives (its death, or the connection's
 *  end, ends the wait with GIMPI_ESYSERR).  The list's records are decoded here, trusting
 *  no length.
 */
#include "groups/groups_internal.h"
#include "base/gimpi_be.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

enum { MBOX_WAIT_FLAG = 32 };   /* PvmMboxWaitForInfo */

/*  Checks a class name and registers: 0 or an error. */
static int s_enter(gimpi_groups_t *self, const char *name)
{
    assert(self);
    if (!name || !*name || strlen(name) > GD_MAX_NAME)
        return GIMPI_EBADPARAM;
    return groups_ready(self);
}

/*  MBOX_PUT: stores the entry; its index. */
int gimpi_mbox_put(gimpi_groups_t *self, const char *name, int req, int flags, int encoding,
                   const void *data, size_t len)
{
    if (req < -1 || (len && !data))
        return GIMPI_EBADPARAM;
    if (len > GD_MBOX_MAX_ENTRY)
        return GIMPI_EOUTOFRES;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    gd_value_t v[5] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = req },
                        { .i = flags }, { .i = encoding },
                        { .data = len ? data : (const void *)"", .len = len } };
    return groups_request(self, GD_MBOX_PUT, v, 5, REQUEST_TIMEOUT_MS, NULL, NULL);
}

/*  MBOX_GET: the entry (a malloc'ed copy) and its index. */
int gimpi_mbox_get(gimpi_groups_t *self, const char *name, int index, int flags,
                   int *encoding, void **data, size_t *len)
{
    assert(encoding && data && len);
    *data = NULL;
    *len = 0;
    if (index < 0)
        return GIMPI_EBADPARAM;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    gd_value_t v[3] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = index },
                        { .i = flags } };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_MBOX_GET, v, 3,
                        flags & MBOX_WAIT_FLAG ? -1 : REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc >= 0) {
        const gd_value_t *e = &reply.values[3];
        *encoding = reply.values[2].i;
        if (!(*data = malloc(e->len ? e->len : 1)))
            rc = GIMPI_ENOMEM;
        else if (e->len)
            memcpy(*data, e->data, e->len);
        *len = rc >= 0 ? e->len : 0;
    }
    gd_multipart_close(&mp);
    return rc;
}

/*  MBOX_DEL: the index deleted. */
int gimpi_mbox_del(gimpi_groups_t *self, const char *name, int index)
{
    if (index < 0)
        return GIMPI_EBADPARAM;
    int rc = s_enter(self, name);
    if (rc)
        return rc;
    gd_value_t v[3] = { { .data = (const uint8_t *)name, .len = strlen(name) }, { .i = index },
                        { .i = 0 } };
    return groups_request(self, GD_MBOX_DEL, v, 3, REQUEST_TIMEOUT_MS, NULL, NULL);
}

/*  Reads a big-endian Int4 at *p if 4 bytes remain before end; false otherwise. */
static bool s_int(const uint8_t **p, const uint8_t *end, int32_t *out)
{
    if (end - *p < 4)
        return false;
    *out = (int32_t)gimpi_be_get32(*p);
    *p += 4;
    return true;
}

/*  Decodes n class records of blob into one block: the array, then every class's three
 *  int arrays, then the names.  NULL when the blob does not hold them (or ENOMEM). */
static gimpi_mbox_class_t *s_decode(const uint8_t *blob, size_t len, int n)
{
    const uint8_t *p = blob, *end = blob + len;
    size_t ints = 0, chars = 0;
    for (int k = 0; k < n; k++) {       /* first pass: check and size */
        int32_t nl, ne;
        if (!s_int(&p, end, &nl) || nl < 0 || nl > end - p || memchr(p, 0, (size_t)nl))
            return NULL;
        p += nl;
        chars += (size_t)nl + 1;
        if (!s_int(&p, end, &ne) || ne < 0 || ne > (end - p) / 12)
            return NULL;
        p += 12 * (size_t)ne;
        ints += 3 * (size_t)ne;
    }
    if (p != end)
        return NULL;
    size_t head = ((size_t)n + 1) * sizeof(gimpi_mbox_class_t);
    gimpi_mbox_class_t *cl = malloc(head + ints * sizeof(int) + chars + 1);
    if (!cl)
        return NULL;
    int *ip = (int *)((char *)cl + head);
    char *cp = (char *)(ip + ints);
    p = blob;
    for (int k = 0; k < n; k++) {
        int32_t nl = 0, ne = 0;
        s_int(&p, end, &nl);
        cl[k].name = cp;
        memcpy(cp, p, (size_t)nl);
        cp[nl] = 0;
        cp += nl + 1;
        p += nl;
        s_int(&p, end, &ne);
        cl[k].nentries = ne;
        cl[k].indices = ip;
        cl[k].owners = ip + ne;
        cl[k].flags = ip + 2 * ne;
        for (int j = 0; j < ne; j++) {
            s_int(&p, end, &cl[k].indices[j]);
            s_int(&p, end, &cl[k].owners[j]);
            s_int(&p, end, &cl[k].flags[j]);
        }
        ip += 3 * ne;
    }
    return cl;
}

/*  MBOX_LIST: the matching classes. */
int gimpi_mbox_list(gimpi_groups_t *self, const char *pattern, gimpi_mbox_class_t **classes,
                    int *n)
{
    assert(self && classes && n);
    *classes = NULL;
    *n = 0;
    if (!pattern)
        pattern = "";
    if (strlen(pattern) > GD_MAX_NAME)
        return GIMPI_EBADPARAM;
    int rc = groups_ready(self);
    if (rc)
        return rc;
    gd_value_t v = { .data = (const uint8_t *)pattern, .len = strlen(pattern) };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_MBOX_LIST, &v, 1, REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc >= 0 && !(*classes = s_decode(reply.values[2].data, reply.values[2].len, rc)))
        rc = GIMPI_EBADMSG;
    if (rc >= 0)
        *n = rc;
    gd_multipart_close(&mp);
    return rc;
}
