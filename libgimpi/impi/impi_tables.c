/*  impi_tables.c — the startup tables of an IMPI job, built from the server's COLL replies.
 *
 *  A client's description (impi_desc_t) becomes one COLL payload per label; each server
 *  reply is split by its client mask with the codec of impi_wire.c, every element is
 *  checked against the label table, and the values are filed into the per-client, per-host
 *  and per-proc tables of impi_tables_t.  impi_tables_finish() then checks that the whole
 *  adds up (all 14 labels, H_NPROCS sums, unique procs, marks, collective crossovers) and
 *  computes the derived values.  The raw replies are kept so that save/load hands a task
 *  exactly what its launcher received, re-validated on the way in.  Nothing here trusts a
 *  count before the bytes that back it have arrived.
 */
#include "impi/impi_tables.h"
#include "base/gimpi_err.h"
#include "base/gimpi_io.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_VERSIONS 8
#define SAVE_MAGIC "GIMPITB1"

/*  The private part: raw replies by label-table index and the parsing state. */
typedef struct {
    uint8_t *raw[IMPI_LABEL_COUNT];
    size_t rawlen[IMPI_LABEL_COUNT];
    int32_t last_label;         /* highest known label taken so far */
    int64_t total_hosts;        /* sum of C_NHOSTS, -1 until known */
    int64_t total_procs;        /* sum of C_NPROCS, -1 until known */
    bool failed;                /* an error happened: refuse further replies */
    bool finished;
} tables_priv_t;

/*  Index of a known label in the label table, or -1. */
static int s_label_index(int32_t label)
{
    for (int i = 0; i < IMPI_LABEL_COUNT; i++)
        if (impi_label_at(i)->value == label)
            return i;
    return -1;
}

/*  Mask with a bit for every client of a job of n clients. */
static uint32_t s_full_mask(int n)
{
    return n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;
}

/* ------------------------------------------------------------------ what a client offers */

/*  Orders proc identities by (address, pid). */
static int s_id_cmp(const void *a, const void *b)
{
    const impi_proc_t *x = a, *y = b;
    int c = memcmp(x->hostid, y->hostid, 16);
    if (c)
        return c;
    return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/*  Checks a client's description against the label table before anything is sent. */
int impi_desc_check(const impi_desc_t *desc, char *err, size_t errsize)
{
    assert(desc);
    if (desc->rank < 0 || desc->rank >= IMPI_MAX_CLIENTS)
        return gimpi_fail(err, errsize, "client rank %d out of range 0..%d", desc->rank,
                          IMPI_MAX_CLIENTS - 1);
    if (desc->nversions < 1 || desc->nversions > MAX_VERSIONS)
        return gimpi_fail(err, errsize, "%d versions offered; 1 to %d allowed", desc->nversions,
                          MAX_VERSIONS);
    if (desc->nhosts < 1 || !desc->hosts)
        return gimpi_fail(err, errsize, "a client needs at least one host (nhosts %d)",
                          desc->nhosts);
    if (desc->nprocs < 1 || !desc->procs)
        return gimpi_fail(err, errsize, "a client needs at least one proc (nprocs %d)",
                          desc->nprocs);
    int64_t sum = 0;
    for (int h = 0; h < desc->nhosts; h++)
        sum += desc->hosts[h].nprocs;
    if (sum != desc->nprocs)
        return gimpi_fail(err, errsize, "the hosts' proc counts add up to %" PRId64
                          " but nprocs is %d", sum, desc->nprocs);
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        const impi_label_info_t *info = impi_label_at(i);
        size_t len;
        uint8_t *p = impi_desc_payload(desc, info->value, &len);
        if (!p)
            return gimpi_fail(err, errsize, "cannot build %s", info->name);
        long count = info->scope == IMPI_SCOPE_HOST ? desc->nhosts
                   : info->scope == IMPI_SCOPE_PROC ? desc->nprocs : -1;
        int rc = impi_coll_validate(info->value, p + 4, len - 4, count);
        free(p);
        if (rc != IMPI_OK)
            return gimpi_fail(err, errsize, "%s: %s", info->name, impi_strerror(rc));
    }
    impi_proc_t *sorted = malloc((size_t)desc->nprocs * sizeof *sorted);
    if (!sorted)
        return gimpi_fail(err, errsize, "out of memory");
    memcpy(sorted, desc->procs, (size_t)desc->nprocs * sizeof *sorted);
    qsort(sorted, (size_t)desc->nprocs, sizeof *sorted, s_id_cmp);
    for (int i = 1; i < desc->nprocs; i++)
        if (impi_proc_equal(&sorted[i - 1], &sorted[i])) {
            char buf[48];
            impi_addr16_format(sorted[i].hostid, buf, sizeof buf);
            int64_t pid = sorted[i].pid;
            free(sorted);
            return gimpi_fail(err, errsize, "two procs are %s pid %" PRId64 ": (address, pid) "
                              "must be unique", buf, pid);
        }
    free(sorted);
    return 0;
}

/*  The COLL payload for one label: the label, then this client's elements. */
uint8_t *impi_desc_payload(const impi_desc_t *desc, int32_t label, size_t *len)
{
    assert(desc);
    const impi_label_info_t *info = impi_label_info(label);
    if (!info || desc->nversions < 0 || desc->nhosts < 0 || desc->nprocs < 0)
        return NULL;
    size_t n = info->type == IMPI_ELEM_VERSION ? (size_t)desc->nversions
             : info->scope == IMPI_SCOPE_CLIENT ? 1
             : info->scope == IMPI_SCOPE_HOST ? (size_t)desc->nhosts : (size_t)desc->nprocs;
    if (info->type == IMPI_ELEM_VERSION && n > MAX_VERSIONS)
        return NULL;
    if ((info->scope == IMPI_SCOPE_HOST && n && !desc->hosts)
        || (info->scope == IMPI_SCOPE_PROC && n && !desc->procs))
        return NULL;
    size_t size = 4 + n * info->elem_size;
    uint8_t *buf = calloc(1, size);
    if (!buf)
        return NULL;
    gimpi_be_put32(buf, (uint32_t)label);
    uint8_t *p = buf + 4;
    for (size_t i = 0; i < n; i++, p += info->elem_size) {
        const impi_desc_host_t *h = info->scope == IMPI_SCOPE_HOST ? &desc->hosts[i] : NULL;
        const impi_proc_t *pr = info->scope == IMPI_SCOPE_PROC ? &desc->procs[i] : NULL;
        switch (label) {
        case IMPI_C_VERSION:
            gimpi_be_put32(p, desc->versions[i][0]);
            gimpi_be_put32(p + 4, desc->versions[i][1]);
            break;
        case IMPI_C_NHOSTS: gimpi_be_put32(p, (uint32_t)desc->nhosts); break;
        case IMPI_C_NPROCS: gimpi_be_put32(p, (uint32_t)desc->nprocs); break;
        case IMPI_C_DATALEN: gimpi_be_put32(p, desc->datalen); break;
        case IMPI_C_TAGUB: gimpi_be_put32(p, (uint32_t)desc->tagub); break;
        case IMPI_C_COLL_XSIZE: gimpi_be_put32(p, (uint32_t)desc->xsize); break;
        case IMPI_C_COLL_MAXLINEAR: gimpi_be_put32(p, (uint32_t)desc->maxlinear); break;
        case IMPI_H_IPV6: memcpy(p, h->addr, 16); break;
        case IMPI_H_PORT: gimpi_be_put32(p, (uint32_t)h->port); break;
        case IMPI_H_NPROCS: gimpi_be_put32(p, (uint32_t)h->nprocs); break;
        case IMPI_H_ACKMARK: gimpi_be_put32(p, h->ackmark); break;
        case IMPI_H_HIWATER: gimpi_be_put32(p, h->hiwater); break;
        case IMPI_P_IPV6: memcpy(p, pr->hostid, 16); break;
        case IMPI_P_PID: gimpi_be_put64(p, (uint64_t)pr->pid); break;
        default: break;
        }
    }
    *len = size;
    return buf;
}

/* ------------------------------------------------------------------ life cycle */

/*  New, empty tables. */
impi_tables_t *impi_tables_new(int nclients, int myclient)
{
    if (nclients < 1 || nclients > IMPI_MAX_CLIENTS || myclient < -1 || myclient >= nclients)
        return NULL;
    impi_tables_t *self = calloc(1, sizeof *self);
    tables_priv_t *priv = calloc(1, sizeof *priv);
    impi_client_info_t *clients = calloc((size_t)nclients, sizeof *clients);
    uint32_t (*pv)[2] = calloc((size_t)nclients * (size_t)nclients, sizeof *pv);
    if (!self || !priv || !clients || !pv) {
        free(self); free(priv); free(clients); free(pv);
        return NULL;
    }
    priv->total_hosts = priv->total_procs = -1;
    self->nclients = nclients;
    self->myclient = myclient;
    self->clients = clients;
    self->pair_version = pv;
    self->priv = priv;
    return self;
}

/*  Frees the tables and nulls the pointer. */
void impi_tables_destroy(impi_tables_t **self_p)
{
    assert(self_p);
    impi_tables_t *self = *self_p;
    if (!self)
        return;
    tables_priv_t *priv = self->priv;
    for (int i = 0; i < IMPI_LABEL_COUNT; i++)
        free(priv->raw[i]);
    free(priv);
    free(self->clients);
    free(self->hosts);
    free(self->procs);
    free(self->pair_version);
    free(self);
    *self_p = NULL;
}

/* ------------------------------------------------------------------ taking replies */

/*  Files one client's validated slice of a reply into the tables. */
static int s_apply(impi_tables_t *self, const impi_label_info_t *info, int c,
                   const impi_slice_t *s, int64_t *hostpos, int64_t *procpos,
                   char *err, size_t errsize)
{
    tables_priv_t *priv = self->priv;
    impi_client_info_t *ci = &self->clients[c];
    if (info->scope == IMPI_SCOPE_CLIENT) {
        if (info->type == IMPI_ELEM_VERSION) {
            if (s->count > MAX_VERSIONS)
                return gimpi_fail(err, errsize, "%s reply: client %d lists %zu versions, at most %d"
                                  " are supported", info->name, c, s->count, MAX_VERSIONS);
            ci->nversions = (int)s->count;
            for (size_t i = 0; i < s->count; i++) {
                ci->versions[i][0] = gimpi_be_get32(s->data + 8 * i);
                ci->versions[i][1] = gimpi_be_get32(s->data + 8 * i + 4);
            }
            return 0;
        }
        int64_t v = impi_elem_int(info, s->data, 0);
        switch (info->value) {
        case IMPI_C_NHOSTS:
            ci->nhosts = (int)v;
            priv->total_hosts += v;
            if (priv->total_hosts > INT_MAX)
                return gimpi_fail(err, errsize, "%s reply: more than %d hosts in all", info->name,
                                  INT_MAX);
            break;
        case IMPI_C_NPROCS:
            ci->nprocs = (int)v;
            priv->total_procs += v;
            if (priv->total_procs > INT_MAX)
                return gimpi_fail(err, errsize, "%s reply: more than %d procs in all", info->name,
                                  INT_MAX);
            break;
        case IMPI_C_DATALEN: ci->datalen = (uint32_t)v; break;
        case IMPI_C_TAGUB: ci->tagub = (int32_t)v; break;
        case IMPI_C_COLL_XSIZE: ci->xsize = (int32_t)v; break;
        case IMPI_C_COLL_MAXLINEAR: ci->maxlinear = (int32_t)v; break;
        default: break;
        }
        return 0;
    }
    for (size_t i = 0; i < s->count; i++) {
        const uint8_t *e = s->data + i * info->elem_size;
        int64_t v = info->type == IMPI_ELEM_ADDR16 ? 0 : impi_elem_int(info, e, 0);
        if (info->scope == IMPI_SCOPE_HOST) {
            impi_host_info_t *h = &self->hosts[(*hostpos)++];
            h->client = c;
            switch (info->value) {
            case IMPI_H_IPV6: memcpy(h->addr, e, 16); break;
            case IMPI_H_PORT: h->port = (int)v; break;
            case IMPI_H_NPROCS: h->nprocs = (int)v; break;
            case IMPI_H_ACKMARK: h->ackmark = (uint32_t)v; break;
            case IMPI_H_HIWATER: h->hiwater = (uint32_t)v; break;
            default: break;
            }
        } else {
            impi_proc_info_t *p = &self->procs[(*procpos)++];
            p->client = c;
            if (info->value == IMPI_P_IPV6)
                memcpy(p->id.hostid, e, 16);
            else if (info->value == IMPI_P_PID)
                p->id.pid = v;
        }
    }
    return 0;
}

/*  Takes one server reply: decode, order, mask, split, validate, file, keep. */
int impi_tables_add_reply(impi_tables_t *self, const uint8_t *payload, size_t len,
                          char *err, size_t errsize)
{
    assert(self);
    tables_priv_t *priv = self->priv;
    if (priv->failed)
        return gimpi_fail(err, errsize, "the tables already failed; no more replies taken");
    if (priv->finished)
        return gimpi_fail(err, errsize, "the tables are finished; no more replies taken");
    impi_coll_reply_t r;
    int rc = impi_coll_reply_decode(payload, len, &r);
    if (rc != IMPI_OK) {
        priv->failed = true;
        return gimpi_fail(err, errsize, "COLL reply of %zu bytes: %s", len, impi_strerror(rc));
    }
    const impi_label_info_t *info = impi_label_info(r.label);
    if (!info)
        return 0;               /* a label this version does not know: skipped */
    priv->failed = true;        /* until proven otherwise */
    if (r.label <= priv->last_label)
        return gimpi_fail(err, errsize, "%s reply after %s: labels must arrive once each, in "
                          "ascending order", info->name, impi_label_name(priv->last_label));
    uint32_t full = s_full_mask(self->nclients);
    if (r.mask & ~full)
        return gimpi_fail(err, errsize, "%s reply: mask 0x%" PRIx32 " names clients beyond the %d"
                          " of the job", info->name, r.mask, self->nclients);
    if (r.mask != full) {
        int missing = 0;
        while (r.mask & (1u << missing))
            missing++;
        return gimpi_fail(err, errsize, "%s reply: client %d missing from mask 0x%" PRIx32
                          " (the label is mandatory)", info->name, missing, r.mask);
    }
    long counts[IMPI_MAX_CLIENTS];
    if (info->scope != IMPI_SCOPE_CLIENT) {
        bool host = info->scope == IMPI_SCOPE_HOST;
        if ((host ? priv->total_hosts : priv->total_procs) < 0)
            return gimpi_fail(err, errsize, "%s reply before the %s reply", info->name,
                              host ? "IMPI_C_NHOSTS" : "IMPI_C_NPROCS");
        for (int c = 0; c < self->nclients; c++)
            counts[c] = host ? self->clients[c].nhosts : self->clients[c].nprocs;
    }
    impi_slice_t slices[IMPI_MAX_CLIENTS];
    rc = impi_coll_reply_split(&r, self->nclients,
                               info->scope == IMPI_SCOPE_CLIENT ? NULL : counts, slices);
    if (rc != IMPI_OK)
        return gimpi_fail(err, errsize, "%s reply: %zu data bytes do not match mask 0x%" PRIx32
                          "%s (%s)", info->name, r.len, r.mask,
                          info->scope == IMPI_SCOPE_HOST ? " and the clients' IMPI_C_NHOSTS"
                          : info->scope == IMPI_SCOPE_PROC ? " and the clients' IMPI_C_NPROCS"
                          : info->type == IMPI_ELEM_VERSION ? " (every client's list must start "
                          "with 0.0)" : "",
                          impi_strerror(rc));
    for (int c = 0; c < self->nclients; c++) {
        rc = impi_coll_validate(r.label, slices[c].data, slices[c].len,
                                info->scope == IMPI_SCOPE_CLIENT ? -1 : counts[c]);
        if (rc != IMPI_OK) {
            char buf[64] = "";
            if (info->type != IMPI_ELEM_VERSION && info->type != IMPI_ELEM_ADDR16)
                for (size_t i = 0; i < slices[c].count; i++) {
                    int64_t v = impi_elem_int(info, slices[c].data, i);
                    if (v < info->min || v > info->max) {
                        snprintf(buf, sizeof buf, ": element %zu is %" PRId64 ", allowed %"
                                 PRId64 "..%" PRId64, i, v, info->min, info->max);
                        break;
                    }
                }
            return gimpi_fail(err, errsize, "%s reply: client %d's contribution: %s%s", info->name,
                              c, impi_strerror(rc), buf);
        }
    }
    /* the bytes backing every host/proc element have arrived: allocation is bounded */
    if (info->scope == IMPI_SCOPE_HOST && !self->hosts) {
        self->hosts = calloc((size_t)priv->total_hosts + 1, sizeof *self->hosts);
        if (!self->hosts)
            return gimpi_fail(err, errsize, "out of memory for %" PRId64 " hosts",
                              priv->total_hosts);
        self->nhosts = (int)priv->total_hosts;
    }
    if (info->scope == IMPI_SCOPE_PROC && !self->procs) {
        self->procs = calloc((size_t)priv->total_procs + 1, sizeof *self->procs);
        if (!self->procs)
            return gimpi_fail(err, errsize, "out of memory for %" PRId64 " procs",
                              priv->total_procs);
        self->nprocs = (int)priv->total_procs;
    }
    if (r.label == IMPI_C_NHOSTS)
        priv->total_hosts = 0;
    if (r.label == IMPI_C_NPROCS)
        priv->total_procs = 0;
    int64_t hostpos = 0, procpos = 0;
    for (int c = 0; c < self->nclients; c++)
        if (s_apply(self, info, c, &slices[c], &hostpos, &procpos, err, errsize) < 0)
            return -1;
    int idx = s_label_index(r.label);
    priv->raw[idx] = malloc(len);
    if (!priv->raw[idx])
        return gimpi_fail(err, errsize, "out of memory keeping the %s reply", info->name);
    memcpy(priv->raw[idx], payload, len);
    priv->rawlen[idx] = len;
    priv->last_label = r.label;
    priv->failed = false;
    return 0;
}

/* ------------------------------------------------------------------ finishing */

/*  Orders procs by (address, pid) through their indices, for the duplicate check. */
static int s_proc_cmp(const void *a, const void *b, void *arg)
{
    const impi_proc_info_t *procs = arg;
    return s_id_cmp(&procs[*(const int *)a].id, &procs[*(const int *)b].id);
}

/*  Highest version listed by both clients (both lists ascending, both start at 0.0). */
static void s_common_version(const impi_client_info_t *a, const impi_client_info_t *b,
                             uint32_t out[2])
{
    out[0] = out[1] = 0;
    for (int i = 0; i < a->nversions; i++)
        for (int j = 0; j < b->nversions; j++)
            if (a->versions[i][0] == b->versions[j][0] && a->versions[i][1] == b->versions[j][1])
                memcpy(out, a->versions[i], sizeof a->versions[i]);
}

/*  Validates the whole and computes the derived values. */
int impi_tables_finish(impi_tables_t *self, char *err, size_t errsize)
{
    assert(self);
    tables_priv_t *priv = self->priv;
    if (priv->failed)
        return gimpi_fail(err, errsize, "the tables failed earlier");
    if (priv->finished)
        return 0;
    for (int i = 0; i < IMPI_LABEL_COUNT; i++)
        if (!priv->raw[i])
            return gimpi_fail(err, errsize, "no reply for %s", impi_label_at(i)->name);
    priv->failed = true;
    /* clients: hosts and procs add up; first host and first proc */
    int host = 0, proc = 0;
    for (int c = 0; c < self->nclients; c++) {
        impi_client_info_t *ci = &self->clients[c];
        ci->first_host = host;
        ci->first_proc = proc;
        int64_t sum = 0;
        for (int h = host; h < host + ci->nhosts; h++) {
            self->hosts[h].first_proc = proc + (int)sum;
            sum += self->hosts[h].nprocs;
        }
        if (sum != ci->nprocs)
            return gimpi_fail(err, errsize, "client %d: its hosts' IMPI_H_NPROCS add up to %" PRId64
                              " but its IMPI_C_NPROCS is %d", c, sum, ci->nprocs);
        for (int h = host; h < host + ci->nhosts; h++)
            for (int p = self->hosts[h].first_proc;
                 p < self->hosts[h].first_proc + self->hosts[h].nprocs; p++)
                self->procs[p].host = h;
        host += ci->nhosts;
        proc += ci->nprocs;
    }
    /* procs are unique by (P_IPV6, P_PID) */
    int *order = malloc((size_t)self->nprocs * sizeof *order);
    if (!order)
        return gimpi_fail(err, errsize, "out of memory");
    for (int i = 0; i < self->nprocs; i++)
        order[i] = i;
    qsort_r(order, (size_t)self->nprocs, sizeof *order, s_proc_cmp, self->procs);
    for (int i = 1; i < self->nprocs; i++)
        if (s_proc_cmp(&order[i - 1], &order[i], self->procs) == 0) {
            int a = order[i - 1] < order[i] ? order[i - 1] : order[i];
            int b = order[i - 1] < order[i] ? order[i] : order[i - 1];
            char buf[48];
            impi_addr16_format(self->procs[a].id.hostid, buf, sizeof buf);
            free(order);
            return gimpi_fail(err, errsize, "world ranks %d (client %d) and %d (client %d) are the "
                              "same proc (%s pid %" PRId64 ")", a, self->procs[a].client, b,
                              self->procs[b].client, buf, self->procs[a].id.pid);
        }
    free(order);
    /* per-client minima and agreements */
    int32_t xsize = -1, maxlinear = -1;
    int xfrom = -1, mfrom = -1;
    for (int c = 0; c < self->nclients; c++) {
        const impi_client_info_t *ci = &self->clients[c];
        if (c == 0 || ci->datalen < self->pktlen)
            self->pktlen = ci->datalen;
        if (c == 0 || ci->tagub < self->tagub)
            self->tagub = ci->tagub;
        int32_t x = ci->xsize < 0 ? IMPI_DEFAULT_XSIZE : ci->xsize;
        int32_t m = ci->maxlinear < 0 ? IMPI_DEFAULT_MAXLINEAR : ci->maxlinear;
        if (xfrom >= 0 && x != xsize)
            return gimpi_fail(err, errsize, "IMPI_C_COLL_XSIZE disagrees: client %d uses %"
                              PRId32 ", client %d uses %" PRId32 " (-1 means %d)", xfrom, xsize,
                              c, x, IMPI_DEFAULT_XSIZE);
        if (mfrom >= 0 && m != maxlinear)
            return gimpi_fail(err, errsize, "IMPI_C_COLL_MAXLINEAR disagrees: client %d uses %"
                              PRId32 ", client %d uses %" PRId32 " (-1 means %d)", mfrom,
                              maxlinear, c, m, IMPI_DEFAULT_MAXLINEAR);
        xsize = x; xfrom = c;
        maxlinear = m; mfrom = c;
    }
    if (self->tagub < IMPI_MIN_TAGUB)
        return gimpi_fail(err, errsize, "tag bound %" PRId32 " below %d", self->tagub,
                          IMPI_MIN_TAGUB);
    self->xsize = xsize;
    self->maxlinear = maxlinear;
    for (int h = 0; h < self->nhosts; h++) {
        if (h == 0 || self->hosts[h].ackmark < self->ackmark)
            self->ackmark = self->hosts[h].ackmark;
        if (h == 0 || self->hosts[h].hiwater < self->hiwater)
            self->hiwater = self->hosts[h].hiwater;
    }
    if (self->ackmark > self->hiwater)
        return gimpi_fail(err, errsize, "global ackmark %" PRIu32 " (minimum IMPI_H_ACKMARK) "
                          "exceeds global hiwater %" PRIu32 " (minimum IMPI_H_HIWATER)",
                          self->ackmark, self->hiwater);
    for (int a = 0; a < self->nclients; a++)
        for (int b = 0; b < self->nclients; b++)
            s_common_version(&self->clients[a], &self->clients[b],
                             self->pair_version[a * self->nclients + b]);
    priv->failed = false;
    priv->finished = true;
    return 0;
}

/* ------------------------------------------------------------------ printing */

/*  Human-readable tables: summary, clients, pair versions, hosts, procs. */
void impi_tables_print(const impi_tables_t *self, FILE *out)
{
    assert(self);
    const tables_priv_t *priv = self->priv;
    char buf[64];
    fprintf(out, "IMPI job: %d clients, %d hosts, %d procs", self->nclients, self->nhosts,
            self->nprocs);
    if (self->myclient >= 0)
        fprintf(out, " (this is client %d)", self->myclient);
    fprintf(out, "%s\n", priv->finished ? "" : " [NOT FINISHED]");
    fprintf(out, "agreed: pktlen %" PRIu32 " tagub %" PRId32 " ackmark %" PRIu32 " hiwater %"
            PRIu32 " xsize %" PRId32 " maxlinear %" PRId32 "\n", self->pktlen, self->tagub,
            self->ackmark, self->hiwater, self->xsize, self->maxlinear);
    fprintf(out, "clients:\n  %-6s %-8s %-8s %-6s %-6s %-10s %-10s %-6s %-9s %s\n", "client",
            "hosts", "procs", "nhosts", "nprocs", "datalen", "tagub", "xsize", "maxlinear",
            "versions");
    for (int c = 0; c < self->nclients; c++) {
        const impi_client_info_t *ci = &self->clients[c];
        char hosts[24], procs[24];
        snprintf(hosts, sizeof hosts, "%d-%d", ci->first_host, ci->first_host + ci->nhosts - 1);
        snprintf(procs, sizeof procs, "%d-%d", ci->first_proc, ci->first_proc + ci->nprocs - 1);
        fprintf(out, "  %-6d %-8s %-8s %-6d %-6d %-10" PRIu32 " %-10" PRId32 " %-6" PRId32
                " %-9" PRId32 " ", c, hosts, procs, ci->nhosts, ci->nprocs, ci->datalen,
                ci->tagub, ci->xsize, ci->maxlinear);
        for (int v = 0; v < ci->nversions; v++)
            fprintf(out, "%s%" PRIu32 ".%" PRIu32, v ? "," : "", ci->versions[v][0],
                    ci->versions[v][1]);
        fputc('\n', out);
    }
    fprintf(out, "pair versions:\n  %-6s", "");
    for (int b = 0; b < self->nclients; b++)
        fprintf(out, " %6d", b);
    fputc('\n', out);
    for (int a = 0; a < self->nclients; a++) {
        fprintf(out, "  %-6d", a);
        for (int b = 0; b < self->nclients; b++) {
            const uint32_t *v = self->pair_version[a * self->nclients + b];
            snprintf(buf, sizeof buf, "%" PRIu32 ".%" PRIu32, v[0], v[1]);
            fprintf(out, " %6s", buf);
        }
        fputc('\n', out);
    }
    fprintf(out, "hosts:\n  %-6s %-6s %-40s %-6s %-6s %-8s %-8s %s\n", "host", "client",
            "address", "port", "nprocs", "ackmark", "hiwater", "ranks");
    for (int h = 0; self->hosts && h < self->nhosts; h++) {
        const impi_host_info_t *hi = &self->hosts[h];
        char ranks[24];
        snprintf(ranks, sizeof ranks, "%d-%d", hi->first_proc, hi->first_proc + hi->nprocs - 1);
        fprintf(out, "  %-6d %-6d %-40s %-6d %-6d %-8" PRIu32 " %-8" PRIu32 " %s\n", h, hi->client,
                impi_addr16_format(hi->addr, buf, sizeof buf), hi->port, hi->nprocs, hi->ackmark,
                hi->hiwater, ranks);
    }
    fprintf(out, "procs:\n  %-6s %-6s %-6s %-40s %s\n", "rank", "host", "client", "address",
            "pid");
    for (int p = 0; self->procs && p < self->nprocs; p++) {
        const impi_proc_info_t *pi = &self->procs[p];
        fprintf(out, "  %-6d %-6d %-6d %-40s %" PRId64 "\n", p, pi->host, pi->client,
                impi_addr16_format(pi->id.hostid, buf, sizeof buf), pi->id.pid);
    }
}

/* ------------------------------------------------------------------ save / load */

/*  FNV-1a 64 over a buffer, continuing from h. */
static uint64_t s_fnv(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}
#define FNV_SEED 0xcbf29ce484222325ULL

/*  Writes "GIMPITB1", nclients, nreplies, the replies and the checksum. */
int impi_tables_save(const impi_tables_t *self, int fd)
{
    assert(self);
    const tables_priv_t *priv = self->priv;
    uint8_t head[16];
    memcpy(head, SAVE_MAGIC, 8);
    uint32_t n = 0;
    for (int i = 0; i < IMPI_LABEL_COUNT; i++)
        n += priv->raw[i] != NULL;
    gimpi_be_put32(head + 8, (uint32_t)self->nclients);
    gimpi_be_put32(head + 12, n);
    uint64_t h = s_fnv(FNV_SEED, head, sizeof head);
    if (gimpi_write_all(fd, head, sizeof head) < 0)
        return -1;
    for (int i = 0; i < IMPI_LABEL_COUNT; i++) {
        if (!priv->raw[i])
            continue;
        uint8_t len[4];
        gimpi_be_put32(len, (uint32_t)priv->rawlen[i]);
        h = s_fnv(s_fnv(h, len, 4), priv->raw[i], priv->rawlen[i]);
        if (gimpi_write_all(fd, len, 4) < 0
            || gimpi_write_all(fd, priv->raw[i], priv->rawlen[i]) < 0)
            return -1;
    }
    uint8_t sum[8];
    gimpi_be_put64(sum, h);
    return gimpi_write_all(fd, sum, 8);
}

/*  Reads exactly n bytes into a buffer grown as the bytes arrive (never sized from the
 *  claim alone).  Returns the buffer, or NULL on end of file, error or no memory. */
static uint8_t *s_read_grow(int fd, size_t n)
{
    size_t cap = n < 65536 ? (n ? n : 1) : 65536, have = 0;
    uint8_t *buf = malloc(cap);
    while (buf && have < n) {
        if (have == cap) {
            cap = cap * 2 < n ? cap * 2 : n;
            uint8_t *nb = realloc(buf, cap);
            if (!nb)
                break;
            buf = nb;
        }
        ssize_t r = read(fd, buf + have, cap - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        have += (size_t)r;
    }
    if (buf && have == n)
        return buf;
    free(buf);
    return NULL;
}

/*  Reads a saved file back and re-validates it like received replies. */
impi_tables_t *impi_tables_load(int fd, int myclient, char *err, size_t errsize)
{
    uint8_t *head = s_read_grow(fd, 16);
    if (!head) {
        gimpi_fail(err, errsize, "saved tables: truncated header");
        return NULL;
    }
    if (memcmp(head, SAVE_MAGIC, 8) != 0) {
        free(head);
        gimpi_fail(err, errsize, "saved tables: bad magic (not a gimpi tables file)");
        return NULL;
    }
    uint32_t nclients = gimpi_be_get32(head + 8), n = gimpi_be_get32(head + 12);
    uint64_t h = s_fnv(FNV_SEED, head, 16);
    free(head);
    if (nclients < 1 || nclients > IMPI_MAX_CLIENTS || n > IMPI_LABEL_COUNT) {
        gimpi_fail(err, errsize, "saved tables: %" PRIu32 " clients, %" PRIu32 " replies: out of "
                   "range", nclients, n);
        return NULL;
    }
    if (myclient < -1 || myclient >= (int)nclients) {
        gimpi_fail(err, errsize, "saved tables: client %d not in a job of %" PRIu32, myclient,
                   nclients);
        return NULL;
    }
    uint8_t *raw[IMPI_LABEL_COUNT] = { 0 };
    uint32_t rawlen[IMPI_LABEL_COUNT] = { 0 };
    impi_tables_t *self = NULL;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t *len = s_read_grow(fd, 4);
        if (!len) {
            gimpi_fail(err, errsize, "saved tables: truncated at reply %" PRIu32, i);
            goto fail;
        }
        rawlen[i] = gimpi_be_get32(len);
        h = s_fnv(h, len, 4);
        free(len);
        if (rawlen[i] < 8 || rawlen[i] > IMPI_MAX_REPLY_PAYLOAD) {
            gimpi_fail(err, errsize, "saved tables: reply %" PRIu32 " claims %" PRIu32 " bytes", i,
                       rawlen[i]);
            goto fail;
        }
        raw[i] = s_read_grow(fd, rawlen[i]);
        if (!raw[i]) {
            gimpi_fail(err, errsize, "saved tables: reply %" PRIu32 " truncated (%" PRIu32
                       " bytes announced)", i, rawlen[i]);
            goto fail;
        }
        h = s_fnv(h, raw[i], rawlen[i]);
    }
    uint8_t *sum = s_read_grow(fd, 8);
    if (!sum) {
        gimpi_fail(err, errsize, "saved tables: truncated checksum");
        goto fail;
    }
    uint64_t want = gimpi_be_get64(sum);
    free(sum);
    if (want != h) {
        gimpi_fail(err, errsize, "saved tables: checksum mismatch (file garbled)");
        goto fail;
    }
    self = impi_tables_new((int)nclients, myclient);
    if (!self) {
        gimpi_fail(err, errsize, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        char msg[256];
        if (impi_tables_add_reply(self, raw[i], rawlen[i], msg, sizeof msg) < 0) {
            gimpi_fail(err, errsize, "saved tables: %s", msg);
            goto fail;
        }
    }
    char msg[256];
    if (impi_tables_finish(self, msg, sizeof msg) < 0) {
        gimpi_fail(err, errsize, "saved tables: %s", msg);
        goto fail;
    }
    for (uint32_t i = 0; i < n; i++)
        free(raw[i]);
    return self;
fail:
    for (uint32_t i = 0; i < n; i++)
        free(raw[i]);
    impi_tables_destroy(&self);
    return NULL;
}
