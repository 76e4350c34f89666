/*  gimpi_vm.c — a task's calls to its virtual machine: the host table (gimpi_hosts), adding
 *  and removing hosts, killing a task wherever it runs, and the requests gimpi_spawn_on
 *  sends when it places tasks on other hosts.
 *
 *  The virtual machine's manager (gimpirun with a host set) publishes the host table in
 *  groupd and serves the requests groupd relays to it (VMREQ): each is one frame of the
 *  VM_* rows of base/gimpi_vmwire.h, answered by a VM_RESULTS frame with one Int4 per
 *  slot.  A task that no manager serves sees one host, its own, and its requests for
 *  other hosts fail with GIMPI_ENOHOST.  See doc/multihost.md.
 */
#include "gimpi.h"
#include "task/gimpi_job.h"
#include "task/gimpi_vm.h"
#include "base/gimpi_vmwire.h"
#include "base/gimpi_tunables.h"

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    VM_HOST_DTID_BASE = 0x40000000, /* host ids: this | (index + 1) << 18 (gimpirun's too) */
    VM_REQUEST_MS = 120000,         /* a request waits this long for the manager at most:
                                       it covers an ssh start of a new host (ConnectTimeout
                                       10 s) and of 4096 tasks */
};

/*  Decodes the VM_HOSTS table.  Count, or an error. */
static int s_decode_hosts(const void *blob, size_t len, gimpi_host_t **hosts)
{
    vmw_msg_t m;
    char err[128];
    if (vmw_decode(blob, len, &m, err, sizeof err) < 0 || m.type != VM_HOSTS)
        return GIMPI_EBADMSG;
    int n = 0;
    while (m.v[0][n])
        n++;
    gimpi_host_t *h = calloc((size_t)n + 1, sizeof *h);
    if (!h) {
        vmw_msg_free(&m);
        return GIMPI_ENOMEM;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        gimpi_host_t *x = &h[k];
        if (sscanf(m.v[0][i], "%d %255s %31s %d %d %d", &x->dtid, x->name, x->arch, &x->speed,
                   &x->slots, &x->ncpu) == 6)
            k++;
    }
    vmw_msg_free(&m);
    *hosts = h;
    return k;
}

/*  The table of a task outside a virtual machine: this host alone. */
static int s_solo(gimpi_t *self, gimpi_host_t **hosts)
{
    gimpi_host_t *h = calloc(1, sizeof *h);
    if (!h)
        return GIMPI_ENOMEM;
    h->dtid = VM_HOST_DTID_BASE | 1 << 18;
    snprintf(h->name, sizeof h->name, "%s", gimpi_hostname(self));
    snprintf(h->arch, sizeof h->arch, "%s", vmw_arch());
    h->speed = 1000;
    h->slots = 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    h->ncpu = n > 0 ? (int)n : 1;
    *hosts = h;
    return 1;
}

int gimpi_hosts(gimpi_t *self, gimpi_host_t **hosts)
{
    assert(self);
    if (!hosts)
        return GIMPI_EBADPARAM;
    *hosts = NULL;
    void *blob = NULL;
    size_t len = 0;
    int rc = gimpi_groups_hosts(gimpi_groups(self), &blob, &len);
    if (rc > 0 && len)
        rc = s_decode_hosts(blob, len, hosts);
    free(blob);
    if (rc > 0)
        return rc;
    if (rc < 0 && rc != GIMPI_ENOHOST && rc != GIMPI_ESYSERR)
        return rc;
    return s_solo(self, hosts);
}

/*  1 when a virtual machine's manager serves this task (a host table is published). */
int gimpi_vm_present(gimpi_t *self)
{
    void *blob = NULL;
    size_t len = 0;
    int rc = gimpi_groups_hosts(gimpi_groups(self), &blob, &len);
    free(blob);
    return rc > 0 && len > 0;
}

/*  Sends one request frame to the manager and decodes the VM_RESULTS answer into
 *  results[n] (when results is not NULL).  The manager's status, or an error. */
int gimpi_vm_request(gimpi_t *self, uint8_t *frame, int32_t *results, int n)
{
    if (!frame)
        return GIMPI_ENOMEM;
    size_t len = vmw_frame_len(frame);
    if (len > VM_MAX_REQUEST) {
        free(frame);
        return GIMPI_EBADPARAM;
    }
    void *rep = NULL;
    size_t replen = 0;
    const char *t = gimpi_env("GIMPI_VM_TIMEOUT_MS");
    int ms = t && *t ? atoi(t) : VM_REQUEST_MS;
    int rc = gimpi_groups_vmreq(gimpi_groups(self), frame, len, &rep, &replen,
                                ms > 0 ? ms : VM_REQUEST_MS);
    free(frame);
    if (rc >= 0 && results) {
        vmw_msg_t m;
        char err[128];
        if (vmw_decode(rep, replen, &m, err, sizeof err) < 0 || m.type != VM_RESULTS
            || m.blen[0] != (size_t)n * 4)
            rc = GIMPI_EBADMSG;
        else
            for (int i = 0; i < n; i++) {
                const uint8_t *b = m.b[0] + 4 * i;
                results[i] = (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16
                                       | (uint32_t)b[2] << 8 | b[3]);
            }
        if (rc != GIMPI_EBADMSG)
            vmw_msg_free(&m);
    }
    free(rep);
    return rc;
}

/*  Adds or removes hosts: one request, one answer per host. */
static int s_hosts_change(gimpi_t *self, int type, char *const hosts[], int n, int *infos)
{
    assert(self);
    if (!hosts || n < 1 || n > 4096)
        return GIMPI_EBADPARAM;
    for (int i = 0; i < n; i++)
        if (!hosts[i] || !*hosts[i])
            return GIMPI_EBADPARAM;
    char **v = calloc((size_t)n + 1, sizeof *v);
    int32_t *res = calloc((size_t)n, sizeof *res);
    if (!v || !res) {
        free(v);
        free(res);
        return GIMPI_ENOMEM;
    }
    memcpy(v, hosts, (size_t)n * sizeof *v);
    size_t len;
    uint8_t *f = vmw_encode(&len, type, v);
    free(v);
    int rc = gimpi_vm_request(self, f, res, n);
    int done = 0;
    for (int i = 0; i < n; i++) {
        int r = rc < 0 ? rc : res[i];
        if (infos)
            infos[i] = r;
        done += type == VM_ADDHOSTS ? r > 0 : r == 0;
    }
    free(res);
    return rc < 0 ? rc : done;
}

int gimpi_addhosts(gimpi_t *self, char *const hosts[], int n, int *infos)
{
    return s_hosts_change(self, VM_ADDHOSTS, hosts, n, infos);
}

int gimpi_delhosts(gimpi_t *self, char *const hosts[], int n, int *infos)
{
    return s_hosts_change(self, VM_DELHOSTS, hosts, n, infos);
}

int gimpi_kill(gimpi_t *self, int tid, int sig)
{
    assert(self);
    if (tid <= 0 || sig < 1 || sig > 64)
        return GIMPI_EBADPARAM;
    gimpi_task_info_t info;
    int rc = gimpi_group_lookup(gimpi_groups(self), tid, &info);
    if (rc == GIMPI_ENOTFOUND)
        rc = GIMPI_ENOTASK;
    /* on this host: the process it registered (the host names agree) */
    if (rc == 0 && info.ospid > 0 && (!info.host[0] || !strcmp(info.host, gimpi_hostname(self))
                                      || !strcmp(info.host, "localhost"))) {
        if (kill((pid_t)info.ospid, sig) == 0)
            return 0;
        return errno == ESRCH ? GIMPI_ENOTASK : GIMPI_ESYSERR;
    }
    if (rc < 0 && rc != GIMPI_ENOTASK)
        return rc;
    /* elsewhere, or not registered yet: the manager started it */
    size_t len;
    int mrc = gimpi_vm_request(self, vmw_encode(&len, VM_KILL, tid, sig), NULL, 0);
    if (mrc == GIMPI_ENOHOST)
        return rc < 0 ? rc : GIMPI_ENOHOST;     /* no manager: only this host's tasks */
    return mrc;
}
