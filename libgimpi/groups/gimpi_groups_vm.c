/*  gimpi_groups_vm.c — the virtual machine's calls of a task's groupd client
 *  (gimpi_group.h, "the virtual machine"; state in groups_internal.h): reading and setting
 *  the host table, the tasks of groupd's registry and a task's own parent and name, a
 *  request to the VM's manager, and the manager's side: its poll(2) fd, its next request
 *  (one VMWAIT kept outstanding on the DEALER, whose reply the request path of
 *  gimpi_groups.c sets aside when it comes first) and its replies; and the console's HALT.
 */
#include "config.h"
#include "groups/groups_internal.h"

#include <assert.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

/*  A malloc'ed copy of a reply's blob (at least one byte allocated), or NULL. */
static void *s_blob_copy(const gd_value_t *v, size_t *len)
{
    void *p = malloc(v->len ? v->len : 1);
    if (p && v->len)
        memcpy(p, v->data, v->len);
    *len = p ? v->len : 0;
    return p;
}

/*  HOSTS: the host table as last set, and its number of hosts. */
int gimpi_groups_hosts(gimpi_groups_t *self, void **blob, size_t *len)
{
    assert(self);
    assert(blob && len);
    *blob = NULL;
    *len = 0;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_HOSTS, NULL, 0, REQUEST_TIMEOUT_MS, &mp, &reply);
    if (rc >= 0 && !(*blob = s_blob_copy(&reply.values[2], len)))
        rc = GIMPI_ENOMEM;
    gd_multipart_close(&mp);
    return rc;
}

/*  HOSTS_SET: stores the host table; the first caller becomes the VM's manager. */
int gimpi_groups_hosts_set(gimpi_groups_t *self, int nhosts, const void *blob, size_t len)
{
    return gimpi_groups_hosts_set_token(self, nhosts, blob, len, NULL);
}

/*  HOSTS_SET with the launcher's token of a groupd started with --launcher. */
int gimpi_groups_hosts_set_token(gimpi_groups_t *self, int nhosts, const void *blob,
                                 size_t len, const char *token)
{
    assert(self);
    uint8_t tok[GD_TOKEN_SIZE];
    size_t toklen = 0;
    if (nhosts < 0 || (size_t)nhosts > len || len > GD_VM_MAX_TABLE || (len && !blob)
        || (token && (strlen(token) != GIMPI_GROUPS_TOKEN_LEN
                      || sodium_hex2bin(tok, sizeof tok, token, GIMPI_GROUPS_TOKEN_LEN, NULL,
                                        &toklen, NULL) != 0 || toklen != GD_TOKEN_SIZE)))
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v[3] = { { .i = nhosts }, { .data = len ? blob : (const void *)"", .len = len },
                        { .data = tok, .len = token ? sizeof tok : 0 } };
    rc = groups_request(self, GD_HOSTS_SET, v, 3, REQUEST_TIMEOUT_MS, NULL, NULL);
    gimpi_key_wipe(tok, sizeof tok);
    return rc;
}

/*  TASKS: the tasks of one host (or all) from groupd's registry. */
int gimpi_groups_tasks(gimpi_groups_t *self, const char *host, gimpi_vm_task_t **out, int *n)
{
    assert(self);
    assert(out && n);
    *out = NULL;
    *n = 0;
    if (!host)
        host = "";
    if (strlen(host) > GD_MAX_TEXT)
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v = { .data = (const uint8_t *)host, .len = strlen(host) };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_TASKS, &v, 1, REQUEST_TIMEOUT_MS, &mp, &reply);
    gd_vmtask_t *recs = NULL;
    int nrec = 0;
    if (rc >= 0 && gd_tasks_decode(reply.values[2].data, reply.values[2].len, &recs, &nrec))
        rc = GIMPI_EBADMSG;
    gd_multipart_close(&mp);
    if (rc < 0)
        return rc;
    gimpi_vm_task_t *t = calloc((size_t)nrec + 1, sizeof *t);
    if (!t) {
        free(recs);
        return GIMPI_ENOMEM;
    }
    for (int k = 0; k < nrec; k++) {
        t[k].tid = recs[k].tid;
        t[k].ptid = recs[k].ptid;
        t[k].pid = recs[k].ospid;
        t[k].flags = recs[k].flags;
        snprintf(t[k].host, sizeof t[k].host, "%s", recs[k].host);
        snprintf(t[k].name, sizeof t[k].name, "%s", recs[k].name);
    }
    free(recs);
    *out = t;
    *n = nrec;
    return nrec;
}

/*  TASKINFO: this task's parent and program name (registers first). */
int gimpi_groups_taskinfo(gimpi_groups_t *self, int ptid, const char *name)
{
    assert(self);
    if (ptid < 0)
        return GIMPI_EBADPARAM;
    if (!name)
        name = "";
    int rc = groups_ready(self);
    if (rc)
        return rc;
    gd_value_t v[2] = { { .i = ptid },
                        { .data = (const uint8_t *)name, .len = strnlen(name, GD_MAX_TEXT) } };
    return groups_request(self, GD_TASKINFO, v, 2, REQUEST_TIMEOUT_MS, NULL, NULL);
}

/*  VMREQ: a request to the VM's manager, answered when the manager answers. */
int gimpi_groups_vmreq(gimpi_groups_t *self, const void *req, size_t len, void **rep,
                       size_t *replen, int timeout_ms)
{
    assert(self);
    assert(rep && replen);
    *rep = NULL;
    *replen = 0;
    if (len > GD_VM_MAX_PAYLOAD || (len && !req))
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v = { .data = len ? req : (const void *)"", .len = len };
    gd_multipart_t mp;
    gd_msg_t reply;
    rc = groups_request(self, GD_VMREQ, &v, 1, timeout_ms, &mp, &reply);
    if (rc >= 0 && !(*rep = s_blob_copy(&reply.values[2], replen)))
        rc = GIMPI_ENOMEM;
    gd_multipart_close(&mp);
    return rc;
}

/*  TASK_EXIT: the manager says a task ended. */
int gimpi_groups_task_exit(gimpi_groups_t *self, int tid, int status)
{
    assert(self);
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v[2] = { { .i = tid }, { .i = status } };
    return groups_request(self, GD_TASK_EXIT, v, 2, REQUEST_TIMEOUT_MS, NULL, NULL);
}

/*  SPAWN_EXIT: a spawner says its child tid died before registering. */
int gimpi_groups_spawn_exit(gimpi_groups_t *self, int tid, const char *token)
{
    assert(self);
    uint8_t tok[GD_TOKEN_SIZE];
    if (tid <= 0 || !token || strlen(token) != GIMPI_GROUPS_TOKEN_LEN
        || sodium_hex2bin(tok, sizeof tok, token, GIMPI_GROUPS_TOKEN_LEN, NULL, NULL, NULL))
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v[2] = { { .i = tid }, { .data = tok, .len = sizeof tok } };
    rc = groups_request(self, GD_SPAWN_EXIT, v, 2, REQUEST_TIMEOUT_MS, NULL, NULL);
    sodium_memzero(tok, sizeof tok);
    return rc;
}

/*  The request socket's notification fd (ZMQ_FD), for the manager's poll(2) loop. */
int gimpi_groups_fd(gimpi_groups_t *self)
{
    assert(self);
    int rc = groups_connect(self);
    if (rc)
        return rc;
    int fd = -1;
    size_t fl = sizeof fd;
    if (zmq_getsockopt(self->dealer, ZMQ_FD, &fd, &fl) < 0)
        return GIMPI_ESYSERR;
    return fd;
}

/*  Reads every message the DEALER holds (no waiting): the VMWAIT's reply is kept, a
 *  deferred leave's is applied, anything else (a late answer) is dropped. */
static void s_vm_drain(gimpi_groups_t *self)
{
    for (;;) {
        int ev = 0;
        size_t el = sizeof ev;
        if (zmq_getsockopt(self->dealer, ZMQ_EVENTS, &ev, &el) < 0 || !(ev & ZMQ_POLLIN))
            return;
        gd_multipart_t mp;
        if (groups_recv(self, &mp, ZMQ_DONTWAIT) < 0)
            return;
        if (!groups_take_deferred(self, &mp))
            groups_take_vmwait(self, &mp);
        gd_multipart_close(&mp);
    }
}

/*  The manager's next request, without waiting: keeps one VMWAIT outstanding. */
int gimpi_groups_mgr_next(gimpi_groups_t *self, int *token, void **payload, size_t *len)
{
    assert(self);
    assert(token && payload && len);
    *token = 0;
    *payload = NULL;
    *len = 0;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    if (groups_check_monitor(self))
        return GIMPI_ESYSERR;
    if (!self->vmwait_reqid && !self->vm_have) {
        int64_t reqid = groups_send_request(self, GD_VMWAIT, NULL, 0);
        if (reqid < 0)
            return (int)reqid;
        self->vmwait_reqid = (uint32_t)reqid;
    }
    s_vm_drain(self);       /* (after the send, which may have taken the fd's signal) */
    if (!self->vm_have)
        return 0;
    gd_msg_t reply;
    rc = gd_reply_decode(GD_VMWAIT, self->vm_mp.frames, self->vm_mp.nparts, &reply);
    if (rc == GD_OK)
        rc = reply.values[0].i;
    else
        rc = GIMPI_EBADMSG;
    if (rc >= 0 && reply.kind == (GD_VMWAIT | GD_REPLY_FLAG)) {
        *token = reply.values[2].i;
        if (!(*payload = s_blob_copy(&reply.values[3], len)))
            rc = GIMPI_ENOMEM;
        else
            rc = 1;
    } else if (rc >= 0)
        rc = GIMPI_EBADMSG;
    gd_multipart_close(&self->vm_mp);
    self->vm_have = false;
    self->vmwait_reqid = 0;
    return rc;
}

/*  VMREP: the manager's answer to the request of `token`. */
int gimpi_groups_mgr_reply(gimpi_groups_t *self, int token, int status, const void *payload,
                           size_t len)
{
    assert(self);
    if (len > GD_VM_MAX_PAYLOAD || (len && !payload))
        return GIMPI_EBADPARAM;
    int rc = groups_connect(self);
    if (rc)
        return rc;
    gd_value_t v[3] = { { .i = token }, { .i = status },
                        { .data = len ? payload : (const void *)"", .len = len } };
    return groups_request(self, GD_VMREP, v, 3, REQUEST_TIMEOUT_MS, NULL, NULL);
}


/*  HALT: groupd answers, then exits (the console's halt).  Its connection may be seen
 *  ending before its answer is read: that is the success too. */
int gimpi_groups_halt(gimpi_groups_t *self)
{
    assert(self);
    int rc = groups_connect(self);
    if (rc)
        return rc;
    rc = groups_request(self, GD_HALT, NULL, 0, REQUEST_TIMEOUT_MS, NULL, NULL);
    return rc == GIMPI_ESYSERR && self->state < 0 ? 0 : rc;
}
