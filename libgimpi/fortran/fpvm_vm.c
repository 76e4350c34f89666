/*  fpvm_vm.c — the Fortran binding's virtual-machine calls (fpvm.h): pvmfconfig, pvmftasks
 *  and pvmfgetmboxinfo, which hand out one row of the C call's table per call, and
 *  pvmfaddhost, pvmfdelhost, pvmfmstat, pvmfarchcode, pvmfhalt, pvmfstartpvmd,
 *  pvmfhostsync.
 *
 *  The row-per-call calls work as PVM's libfpvm3: the first call asks the C call and
 *  returns its first row, each later one the next row, and the call after the last row
 *  asks again (pvmfconfig, pvmftasks) or says PvmNotFound (pvmfgetmboxinfo, as its
 *  manual page says); -1 in nhost / ntask / nclasses starts over.  PVM kept the table in
 *  statics; here a copy of it (rows_t, one malloc'd block) is kept in the process's PVM
 *  context (pvm_ctx_keep), so C calls in between do not disturb it and pvm_exit ends it.
 */
#include "fortran/fpvm.h"
#include "fortran/fpvm_str.h"
#include "pvm/pvm_ctx.h"
#include "pvm3.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

/*  A C call's table as the Fortran calls hand it out: n rows of nint ints and nstr
 *  strings, plus a pool of ints the rows point into.  One block: header, string
 *  pointers, ints, pool, string bytes. */
typedef struct {
    int n, next;                /* rows; the next one to hand out */
    int narch;                  /* pvm_config's narch */
    int nint, nstr;
    char **strs;                /* n * nstr */
    int *ints;                  /* n * nint */
    int *pool;
    char *bytes;                /* where the next string copy goes */
} rows_t;

/*  An empty table for n rows and nbytes of strings (NUL included); NULL on ENOMEM. */
static rows_t *s_rows_new(int n, int nint, int nstr, size_t nbytes, size_t npool)
{
    size_t nptr = (size_t)n * (size_t)nstr, nints = (size_t)n * (size_t)nint + npool;
    rows_t *r = malloc(sizeof *r + nptr * sizeof(char *) + nints * sizeof(int) + nbytes);
    if (!r)
        return NULL;
    *r = (rows_t){ .n = n, .nint = nint, .nstr = nstr };
    r->strs = (char **)(r + 1);
    r->ints = (int *)(r->strs + nptr);
    r->pool = r->ints + (size_t)n * (size_t)nint;
    r->bytes = (char *)(r->pool + npool);
    return r;
}

/*  Copies s (NULL: "") into the table's strings; returns the copy. */
static char *s_rows_str(rows_t *r, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    char *c = r->bytes;
    if (n)
        memcpy(c, s, n);
    c[n] = '\0';
    r->bytes += n + 1;
    return c;
}

/*  Bytes s needs in a table. */
static size_t s_len(const char *s)
{
    return (s ? strlen(s) : 0) + 1;
}

/*  pvm_config's table: ints tid, speed; strings name, arch.  NULL with *rc. */
static rows_t *s_query_config(const void *arg, int *rc)
{
    (void)arg;
    int nh = 0, na = 0;
    struct pvmhostinfo *hi = NULL;
    *rc = pvm_config(&nh, &na, &hi);
    if (*rc < 0)
        return NULL;
    size_t bytes = 0;
    for (int i = 0; i < nh; i++)
        bytes += s_len(hi[i].hi_name) + s_len(hi[i].hi_arch);
    rows_t *r = s_rows_new(nh, 2, 2, bytes, 0);
    if (!r) {
        *rc = PvmNoMem;
        return NULL;
    }
    r->narch = na;
    for (int i = 0; i < nh; i++) {
        r->ints[2 * i] = hi[i].hi_tid;
        r->ints[2 * i + 1] = hi[i].hi_speed;
        r->strs[2 * i] = s_rows_str(r, hi[i].hi_name);
        r->strs[2 * i + 1] = s_rows_str(r, hi[i].hi_arch);
    }
    return r;
}

/*  pvm_tasks' table for where (arg: an int): ints tid, ptid, host, flag; string a_out.
 *  NULL with *rc. */
static rows_t *s_query_tasks(const void *arg, int *rc)
{
    int nt = 0;
    struct pvmtaskinfo *ti = NULL;
    *rc = pvm_tasks(*(const int *)arg, &nt, &ti);
    if (*rc < 0)
        return NULL;
    size_t bytes = 0;
    for (int i = 0; i < nt; i++)
        bytes += s_len(ti[i].ti_a_out);
    rows_t *r = s_rows_new(nt, 4, 1, bytes, 0);
    if (!r) {
        *rc = PvmNoMem;
        return NULL;
    }
    for (int i = 0; i < nt; i++) {
        int *v = r->ints + 4 * i;
        v[0] = ti[i].ti_tid, v[1] = ti[i].ti_ptid, v[2] = ti[i].ti_host, v[3] = ti[i].ti_flag;
        r->strs[i] = s_rows_str(r, ti[i].ti_a_out);
    }
    return r;
}

/*  pvm_getmboxinfo's table for pattern arg (a string): ints nentries, offset in the pool of the
 *  entries' indices, owners and flags (3 * nentries); string the class name.  NULL with
 *  *rc. */
static rows_t *s_query_mbox(const void *arg, int *rc)
{
    int nc = 0;
    struct pvmmboxinfo *mi = NULL;
    *rc = pvm_getmboxinfo((char *)arg, &nc, &mi);
    if (*rc < 0)
        return NULL;
    size_t bytes = 0, pool = 0;
    for (int i = 0; i < nc; i++) {
        bytes += s_len(mi[i].mi_name);
        pool += 3 * (size_t)(mi[i].mi_nentries > 0 ? mi[i].mi_nentries : 0);
    }
    rows_t *r = s_rows_new(nc, 2, 1, bytes, pool);
    if (!r) {
        *rc = PvmNoMem;
        return NULL;
    }
    int off = 0;
    for (int i = 0; i < nc; i++) {
        int k = mi[i].mi_nentries > 0 ? mi[i].mi_nentries : 0;
        r->ints[2 * i] = k;
        r->ints[2 * i + 1] = off;
        for (int j = 0; j < k; j++) {
            r->pool[off + j] = mi[i].mi_indices ? mi[i].mi_indices[j] : 0;
            r->pool[off + k + j] = mi[i].mi_owners ? mi[i].mi_owners[j] : 0;
            r->pool[off + 2 * k + j] = mi[i].mi_flags ? mi[i].mi_flags[j] : 0;
        }
        off += 3 * k;
        r->strs[i] = s_rows_str(r, mi[i].mi_name);
    }
    return r;
}

/*  A row-per-call call: its slot in the context, its name, how it asks for a table, and
 *  whether the call after the last row says PvmNotFound (true) or asks again. */
typedef struct {
    int which;
    const char *fn;
    rows_t *(*query)(const void *arg, int *rc);
    bool notfound;
} iter_t;

static const iter_t s_config = { PVM_CTX_KEPT_FCONFIG, "pvmfconfig", s_query_config, false };
static const iter_t s_tasks = { PVM_CTX_KEPT_FTASKS, "pvmftasks", s_query_tasks, false };
static const iter_t s_mbox = { PVM_CTX_KEPT_FMBOX, "pvmfgetmboxinfo", s_query_mbox, true };

/*  The table of `it` with a row to hand out, asked for (it->query(arg)) when there is
 *  none, reset asks to start over, or the last row was handed out; with it->notfound a
 *  used-up table is dropped instead and NULL returned with *rc PvmNotFound.  NULL with
 *  *rc < 0 on failure, or *rc 0 for an empty answer. */
static rows_t *s_rows(const iter_t *it, bool reset, const void *arg, int *rc)
{
    pvm_ctx_t *ctx = pvm_ctx_current();
    if (!ctx) {
        *rc = fpvm_fail(it->fn, PvmNoMem);
        return NULL;
    }
    rows_t *r = pvm_ctx_kept(ctx, it->which);
    if (r && !reset && r->next < r->n)
        return r;
    bool used_up = r && !reset;
    pvm_ctx_keep(ctx, it->which, NULL);
    if (used_up && it->notfound) {
        *rc = PvmNotFound;
        return NULL;
    }
    r = it->query(arg, rc);
    if (r && r->n > 0) {
        pvm_ctx_keep(ctx, it->which, r);
        return r;
    }
    free(r);
    return NULL;
}

/*  One host of the virtual machine per call (see above); info 1, or the error. */
void pvmfconfig_(int *nhost, int *narch, int *dtid, char *name, char *arch, int *speed,
                 int *info, size_t name_len, size_t arch_len)
{
    int rc;
    rows_t *r = s_rows(&s_config, nhost && *nhost == -1, NULL, &rc);
    if (!r) {
        *info = rc;
        return;
    }
    int i = r->next++;
    if (nhost)
        *nhost = r->n;
    if (narch)
        *narch = r->narch;
    if (dtid)
        *dtid = r->ints[2 * i];
    if (speed)
        *speed = r->ints[2 * i + 1];
    if (name)
        fpvm_str_out(name, name_len, r->strs[2 * i]);
    if (arch)
        fpvm_str_out(arch, arch_len, r->strs[2 * i + 1]);
    *info = 1;
}

/*  One task per call (see above) of those where says (0: all, a host id, a tid); info 1,
 *  the error, or 0 with ntask 0 when there is none. */
void pvmftasks_(int *where, int *ntask, int *tid, int *ptid, int *dtid, int *flag,
                char *aout, int *info, size_t aout_len)
{
    int rc;
    rows_t *r = s_rows(&s_tasks, ntask && *ntask == -1, where, &rc);
    if (!r) {
        if (rc == 0 && ntask)
            *ntask = 0;
        *info = rc;
        return;
    }
    int i = r->next++;
    const int *v = r->ints + 4 * i;
    if (ntask)
        *ntask = r->n;
    if (tid)
        *tid = v[0];
    if (ptid)
        *ptid = v[1];
    if (dtid)
        *dtid = v[2];
    if (flag)
        *flag = v[3];
    if (aout)
        fpvm_str_out(aout, aout_len, r->strs[i]);
    *info = 1;
}

/*  One class of the message box matching pattern per call: its name, its number of
 *  entries and their indices, owners and flags (arrays of at least nentries); nclasses
 *  the number of classes; info 0, then PvmNotFound once all were handed out (the next
 *  call asks again), or the error. */
void pvmfgetmboxinfo_(char *pattern, char *name, int *nclasses, int *nentries, int *index,
                      int *owner, int *flags, int *info, size_t pattern_len,
                      size_t name_len)
{
    char *pat = fpvm_str_in(pattern, pattern_len);
    if (!pat) {
        *info = fpvm_fail("pvmfgetmboxinfo", PvmNoMem);
        return;
    }
    int rc;
    rows_t *r = s_rows(&s_mbox, nclasses && *nclasses == -1, pat, &rc);
    free(pat);
    if (!r) {
        *info = rc == 0 ? PvmNotFound : rc;
        return;
    }
    int i = r->next++, k = r->ints[2 * i];
    const int *p = r->pool + r->ints[2 * i + 1];
    if (nclasses)
        *nclasses = r->n;
    if (nentries)
        *nentries = k;
    for (int j = 0; j < k; j++) {
        if (index)
            index[j] = p[j];
        if (owner)
            owner[j] = p[k + j];
        if (flags)
            flags[j] = p[2 * k + j];
    }
    if (name)
        fpvm_str_out(name, name_len, r->strs[i]);
    *info = 0;
}

/*  pvm_addhosts (add true) or pvm_delhosts of one host: its result, or the host's own
 *  result (the new host's id when added) when that is not an error. */
static int s_host(bool add, char *host, size_t len)
{
    char *h = fpvm_str_in(host, len);
    if (!h)
        return fpvm_fail(add ? "pvmfaddhost" : "pvmfdelhost", PvmNoMem);
    int one = 0;
    int rc = add ? pvm_addhosts(&h, 1, &one) : pvm_delhosts(&h, 1, &one);
    free(h);
    return rc < 0 ? rc : one;
}

/*  Adds a host; info its host id or an error. */
void pvmfaddhost_(char *host, int *info, size_t host_len)
{
    *info = s_host(true, host, host_len);
}

/*  Deletes a host; info 0 or an error. */
void pvmfdelhost_(char *host, int *info, size_t host_len)
{
    *info = s_host(false, host, host_len);
}

/*  The status of a host. */
void pvmfmstat_(char *host, int *mstat, size_t host_len)
{
    char *h = fpvm_str_in(host, host_len);
    *mstat = h ? pvm_mstat(h) : fpvm_fail("pvmfmstat", PvmNoMem);
    free(h);
}

/*  The data-format code of an architecture. */
void pvmfarchcode_(char *arch, int *code, size_t arch_len)
{
    char *a = fpvm_str_in(arch, arch_len);
    *code = a ? pvm_archcode(a) : fpvm_fail("pvmfarchcode", PvmNoMem);
    free(a);
}

/*  Stops the virtual machine. */
void pvmfhalt_(int *info)
{
    *info = pvm_halt();
}

/*  Starts the virtual machine with args, split at blanks and tabs as PVM did. */
void pvmfstartpvmd_(char *args, int *block, int *info, size_t args_len)
{
    char *line = fpvm_str_in(args, args_len);
    char **av = calloc(args_len / 2 + 1, sizeof *av);
    if (!line || !av) {
        free(line);
        free(av);
        *info = fpvm_fail("pvmfstartpvmd", PvmNoMem);
        return;
    }
    int ac = 0;
    for (char *save = NULL, *w = strtok_r(line, " \t", &save); w;
         w = strtok_r(NULL, " \t", &save))
        av[ac++] = w;
    *info = pvm_start_pvmd(ac, ac ? av : NULL, *block);
    free(av);
    free(line);
}

/*  A host's clock and its difference from this one's, in seconds and microseconds. */
void pvmfhostsync_(int *host, int *sec, int *usec, int *dsec, int *dusec, int *info)
{
    struct timeval clk = { 0, 0 }, delta = { 0, 0 };
    *info = pvm_hostsync(*host, &clk, &delta);
    *sec = (int)clk.tv_sec;
    *usec = (int)clk.tv_usec;
    *dsec = (int)delta.tv_sec;
    *dusec = (int)delta.tv_usec;
}
