/*  gimpi_hostset_slurm.c — a Slurm allocation as host lines of the set: the node list
 *  in Slurm's compressed hostlist syntax ("node[01-03,7],gpu[1-2]b[3-4]") and the slots
 *  per node from SLURM_TASKS_PER_NODE or SLURM_JOB_CPUS_PER_NODE ("2(x3),1").  Every
 *  range is checked and counted before anything is expanded, so a short variable cannot
 *  make a huge list, and the allocation goes in whole or not at all.
 */
#include "base/gimpi_hostset.h"
#include "base/hostset_internal.h"
#include "base/gimpi_err.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*  The longest Slurm variable looked at: hostlists are compressed, so this is generous. */
#define S_MAX_SLURM_TEXT (1 << 20)
/*  Bracket groups in one element of a Slurm hostlist ("a[1-2]b[3-4]" has two). */
#define S_MAX_GROUPS 8

/*  Slurm's hostlist syntax: a growing list of expanded names. */
typedef struct {
    char (*names)[256];
    int n, cap;
} s_names_t;

/*  One bracket group of a hostlist element, expanded: its numbers and their widths. */
typedef struct {
    long *vals;
    int *widths;
    int n;
} s_group_t;

/*  Expands the bracket group text g[0..len) ("01-03,7") into grp; at most limit numbers.
 *  The first pass checks and counts, so that nothing is allocated for an enormous range;
 *  the second fills in. */
static int s_group(const char *var, const char *g, size_t len, long limit, s_group_t *grp,
                   char *err, size_t errsize)
{
    long count = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1) {
            grp->vals = malloc((size_t)count * sizeof *grp->vals);
            grp->widths = malloc((size_t)count * sizeof *grp->widths);
            if (!grp->vals || !grp->widths)
                return gimpi_fail(err, errsize, "out of memory");
        }
        for (size_t i = 0; i <= len;) {
            size_t j = i;
            while (j < len && g[j] != ',')
                j++;
            const char *dash = memchr(g + i, '-', j - i);
            size_t lolen = dash ? (size_t)(dash - (g + i)) : j - i;
            long lo = 0, hi = 0;
            if (!hostset_number(g + i, lolen, 0, 999999999, &lo)
                || (dash && !hostset_number(dash + 1, (size_t)(g + j - dash - 1), 0, 999999999,
                                            &hi)))
                return gimpi_fail(err, errsize, "%s: bad range '%.*s' in '[%.*s]' (numbers of at "
                                  "most %d digits, lo-hi)", var, (int)(j - i > 40 ? 40 : j - i),
                                  g + i, (int)(len > 60 ? 60 : len), g, HOSTSET_MAX_DIGITS);
            if (!dash)
                hi = lo;
            if (hi < lo)
                return gimpi_fail(err, errsize, "%s: range '%.*s' runs backwards", var,
                                  (int)(j - i), g + i);
            if (pass == 0 && hi - lo + 1 > limit - count)
                return gimpi_fail(err, errsize, "%s: '[%.*s]' expands to more than %d hosts", var,
                                  (int)(len > 60 ? 60 : len), g, GIMPI_HOSTSET_MAX_HOSTS);
            for (long v = lo; pass == 1 && v <= hi; v++) {
                grp->vals[grp->n] = v;
                grp->widths[grp->n++] = (int)lolen;     /* zero padding as the low end has it */
            }
            count += pass == 0 ? hi - lo + 1 : 0;
            i = j + 1;
        }
    }
    return 0;
}

/*  Appends the names of one hostlist element e[0..len) ("rack[1-2]-n[3-4]") to out:
 *  every combination, the first group varying slowest. */
static int s_element(const char *var, const char *e, size_t len, s_names_t *out, char *err,
                     size_t errsize)
{
    const char *lit[S_MAX_GROUPS + 1];          /* literal text before each group, and after */
    size_t litlen[S_MAX_GROUPS + 1];
    s_group_t grp[S_MAX_GROUPS];
    int ng = 0, rc = 0;
    long combos = 1, limit = GIMPI_HOSTSET_MAX_HOSTS - out->n;
    size_t i = 0;
    memset(grp, 0, sizeof grp);
    if (len == 0)
        return gimpi_fail(err, errsize, "%s: empty host name", var);
    for (;;) {
        const char *open = memchr(e + i, '[', len - i);
        size_t stop = open ? (size_t)(open - e) : len;
        lit[ng] = e + i;
        litlen[ng] = stop - i;
        if (!open)
            break;
        const char *close = memchr(open, ']', len - stop);
        if (ng == S_MAX_GROUPS) {
            rc = gimpi_fail(err, errsize, "%s: more than %d bracket groups in one name", var,
                            S_MAX_GROUPS);
            goto done;
        }
        /* (the caller has checked that brackets pair up and do not nest) */
        if (s_group(var, open + 1, (size_t)(close - open - 1), limit, &grp[ng], err, errsize) < 0) {
            ng++;
            rc = -1;
            goto done;
        }
        if (combos * grp[ng].n > limit) {
            ng++;
            rc = gimpi_fail(err, errsize, "%s: '%.*s' expands to more than %d hosts", var,
                            (int)(len > 60 ? 60 : len), e, GIMPI_HOSTSET_MAX_HOSTS);
            goto done;
        }
        combos *= grp[ng].n;
        ng++;
        i = (size_t)(close - e) + 1;
    }
    if (combos > limit) {
        rc = gimpi_fail(err, errsize, "%s: more than %d hosts", var, GIMPI_HOSTSET_MAX_HOSTS);
        goto done;
    }
    if (out->n + combos > out->cap) {
        int cap = out->n + (int)combos;
        if (cap < 2 * out->cap)
            cap = 2 * out->cap < GIMPI_HOSTSET_MAX_HOSTS ? 2 * out->cap : GIMPI_HOSTSET_MAX_HOSTS;
        void *names = realloc(out->names, (size_t)cap * sizeof *out->names);
        if (!names) {
            rc = gimpi_fail(err, errsize, "out of memory");
            goto done;
        }
        out->names = names;
        out->cap = cap;
    }
    int idx[S_MAX_GROUPS] = { 0 };
    for (long c = 0; c < combos; c++) {
        char name[sizeof out->names[0]], msg[GIMPI_HOSTSET_ERRLEN];
        size_t n = 0;
        bool toolong = false;
        for (int g = 0; g <= ng && !toolong; g++) {
            toolong = n + litlen[g] >= sizeof name;
            if (toolong)
                break;
            memcpy(name + n, lit[g], litlen[g]);
            n += litlen[g];
            if (g < ng) {
                int w = snprintf(name + n, sizeof name - n, "%0*ld", grp[g].widths[idx[g]],
                                 grp[g].vals[idx[g]]);
                toolong = n + (size_t)w >= sizeof name;
                n += toolong ? 0 : (size_t)w;
            }
        }
        name[n] = '\0';
        if (toolong) {
            rc = gimpi_fail(err, errsize, "%s: a name made from '%s' is longer than %zu characters",
                            var, hostset_short(e).s, sizeof name - 1);
            goto done;
        }
        if (hostset_hostname(name, out->names[out->n], sizeof out->names[out->n], "host name", msg,
                             sizeof msg) < 0) {
            rc = gimpi_fail(err, errsize, "%s: %s", var, msg);
            goto done;
        }
        out->n++;
        for (int g = ng - 1; g >= 0; g--) {     /* odometer: the last group turns fastest */
            if (++idx[g] < grp[g].n)
                break;
            idx[g] = 0;
        }
    }
done:
    for (int g = 0; g < ng; g++) {
        free(grp[g].vals);
        free(grp[g].widths);
    }
    return rc;
}

/*  Expands a whole Slurm hostlist ("node[01-03,7],gpu5") into out. */
static int s_hostlist(const char *var, const char *list, s_names_t *out, char *err, size_t errsize)
{
    size_t len = strnlen(list, S_MAX_SLURM_TEXT + 1);
    if (len > S_MAX_SLURM_TEXT)
        return gimpi_fail(err, errsize, "%s is longer than %d characters", var, S_MAX_SLURM_TEXT);
    size_t start = 0;
    int depth = 0;
    for (size_t i = 0; i <= len; i++) {
        char c = list[i];
        if (c == '[') {
            if (depth++)
                return gimpi_fail(err, errsize, "%s: nested '[' in '%s'", var,
                                  hostset_short(list + start).s);
        } else if (c == ']') {
            if (!depth--)
                return gimpi_fail(err, errsize, "%s: ']' without '[' in '%s'", var,
                                  hostset_short(list + start).s);
        } else if ((c == ',' && !depth) || c == '\0') {
            if (depth)
                return gimpi_fail(err, errsize, "%s: unterminated '[' in '%s'", var,
                                  hostset_short(list + start).s);
            if (s_element(var, list + start, i - start, out, err, errsize) < 0)
                return -1;
            start = i + 1;
        }
    }
    return 0;
}

/*  Slurm's per-node counts ("2(x3),1") for exactly n nodes into counts. */
static int s_slurm_counts(const char *var, const char *s, int n, int *counts, char *err,
                          size_t errsize)
{
    int k = 0;
    const char *p = s;
    for (;;) {
        size_t d = strspn(p, "0123456789");
        long c, rep = 1;
        if (!hostset_number(p, d, 1, GIMPI_HOSTSET_MAX_SLOTS, &c))
            return gimpi_fail(err, errsize,
                              "%s='%s': expected counts like 2(x3),1 (each from 1 to %d)",
                              var, hostset_short(s).s, GIMPI_HOSTSET_MAX_SLOTS);
        p += d;
        if (p[0] == '(') {
            size_t r = p[1] == 'x' ? strspn(p + 2, "0123456789") : 0;
            if (p[1] != 'x' || !hostset_number(p + 2, r, 1, GIMPI_HOSTSET_MAX_HOSTS, &rep)
                || p[2 + r] != ')')
                return gimpi_fail(err, errsize, "%s='%s': bad repeat, expected N(xM)", var,
                                  hostset_short(s).s);
            p += 3 + r;
        }
        if (rep > n - k)
            return gimpi_fail(err, errsize,
                              "%s='%s' counts more nodes than the %d of the allocation",
                              var, hostset_short(s).s, n);
        while (rep--)
            counts[k++] = (int)c;
        if (*p == '\0')
            break;
        if (*p++ != ',')
            return gimpi_fail(err, errsize, "%s='%s': expected ',' after a count", var,
                              hostset_short(s).s);
    }
    if (k != n)
        return gimpi_fail(err, errsize, "%s='%s' counts %d nodes, the allocation has %d", var,
                          hostset_short(s).s, k, n);
    return 0;
}

/*  getenv, in the shape of a lookup callback. */
static const char *s_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/*  The Slurm allocation (gimpi_hostset.h). */
int gimpi_hostset_add_slurm(gimpi_hostset_t *self, gimpi_hostset_getenv_fn *get, void *arg,
                            char *err, size_t errsize)
{
    assert(self);
    if (!get)
        get = s_getenv;
    const char *var = "SLURM_JOB_NODELIST", *list = get(var, arg);
    if (!list || !*list) {
        var = "SLURM_NODELIST";
        list = get(var, arg);
    }
    if (!list || !*list)
        return 0;
    s_names_t names = { 0 };
    int *counts = NULL, rc = s_hostlist(var, list, &names, err, errsize);
    if (rc == 0 && names.n == 0)
        rc = gimpi_fail(err, errsize, "%s names no host", var);
    if (rc == 0 && !(counts = malloc((size_t)names.n * sizeof *counts)))
        rc = gimpi_fail(err, errsize, "out of memory");
    if (rc == 0) {
        const char *cvar = "SLURM_TASKS_PER_NODE", *cs = get(cvar, arg);
        if (!cs || !*cs) {
            cvar = "SLURM_JOB_CPUS_PER_NODE";
            cs = get(cvar, arg);
        }
        if (cs && *cs) {
            if (strnlen(cs, S_MAX_SLURM_TEXT + 1) > S_MAX_SLURM_TEXT)
                rc = gimpi_fail(err, errsize, "%s is longer than %d characters", cvar,
                                S_MAX_SLURM_TEXT);
            else
                rc = s_slurm_counts(cvar, cs, names.n, counts, err, errsize);
        } else {
            for (int i = 0; i < names.n; i++)
                counts[i] = 1;
        }
    }
    if (rc == 0) {
        hostset_snap_t snap = hostset_snap_take(self);
        if (!snap.ok)
            rc = gimpi_fail(err, errsize, "out of memory");
        char msg[GIMPI_HOSTSET_ERRLEN];
        for (int i = 0; rc == 0 && i < names.n; i++) {
            hostset_line_t ln = { .what = LINE_HOST, .e = self->defaults };
            ln.e.given = OPT_SLOTS;
            snprintf(ln.e.info.name, sizeof ln.e.info.name, "%s", names.names[i]);
            ln.e.info.slots = counts[i];
            if (hostset_apply(self, &ln, msg, sizeof msg) < 0)
                rc = gimpi_fail(err, errsize, "%s: %s", var, msg);
        }
        if (snap.ok)
            hostset_snap_end(self, &snap, rc < 0);
    }
    free(names.names);
    free(counts);
    return rc < 0 ? -1 : names.n;
}
