/*  trace_merge.c — a traced job's files (base/gimpi_tev.h, one per task) merged into one
 *  Chrome trace-event JSON file: load and check every file, match each message's send to
 *  its receive by (src, dst, ctx, seq), put every host on the reference clock (the offset
 *  each file's header carries, then the smallest shift per host that draws no message
 *  received before it was sent), and write the events: a process per host, a thread per
 *  task, "X" slices for calls (cat "wait" or "overhead") and for the computing between
 *  them (cat "compute"), "s"/"f" flows for messages, "C" counters for the queues and "i"
 *  instants for the rest.  Nothing in a file is trusted: a bad length, kind, time or
 *  string is an error naming the file, and calls that do not pair up are closed where the
 *  record stream says they must have ended, so that the slices of a thread always nest.
 */
#include "config.h"
#include "programs/trace_merge.h"
#include "base/gimpi_tev.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(gimpi_tev_file_t) == 256, "the trace file header is 256 bytes");
_Static_assert(sizeof(gimpi_tev_rec_t) == 48, "a record's fixed part is 48 bytes");

#define MERGE_MAX_FILE   ((int64_t)1 << 34)      /* 16 GiB: more is not a task's trace */
#define MERGE_MAX_TIME   ((int64_t)1 << 62)      /* a time at or past this is garbage */
#define MERGE_MAX_OFFSET ((int64_t)1 << 60)      /* an offset at or past this too */
#define MERGE_MAX_SHIFT  ((int64_t)3600 * 1000000000)  /* a shift past 1 h is not a clock's */
#define MERGE_MAX_DEPTH  64                      /* calls open at once in one task */

/*  One record, decoded into the reader's byte order, its time on the reference clock. */
typedef struct {
    int kind, ev;
    int64_t t;                  /* reference clock; never before the task's previous one */
    int32_t i[GIMPI_TEV_INTS];
    const char *s;              /* into the file's buffer, slen bytes, no NUL */
    int slen;
    int flow;                   /* SEND, RECV: the message's id once matched, else 0 */
    int64_t ft;                 /* RECV: where the flow's end is drawn (>= its start) */
} mrec_t;

/*  One task: its file's header and records. */
typedef struct {
    char *name;                 /* the file's name (for errors) */
    uint8_t *buf;               /* the whole file */
    int tid, pid;
    int64_t off, err, begin;    /* offset, its error bound, first time on the ref clock */
    char host[64], program[64];
    int hostix;                 /* index in hosts */
    int thread;                 /* its Chrome tid: 1.. in tid order */
    mrec_t *recs;
    size_t n, cap;
} mtask_t;

/*  One host: a clock shared by its tasks. */
typedef struct {
    const char *name;           /* a task's host field */
    int mintid;                 /* its smallest task tid (the hosts' order) */
    int64_t off, err;           /* its tasks' offset and error bound */
    int64_t shift;              /* added to its times so that no message goes backwards */
} mhost_t;

/*  One end of a message: its key and where its record is. */
typedef struct {
    int32_t src, dst, ctx, seq;
    int task;
    size_t rec;
} mend_t;

/*  The merge's whole state. */
typedef struct {
    mtask_t *tasks;
    int ntasks;
    mhost_t *hosts;
    int nhosts;
    int nmsgs, unsent, unreceived, clamped, dropped;
    bool partial;               /* TRACE_MERGE_PARTIAL */
    int cut, skipped;           /* files ended early, files skipped (partial only) */
    long lost;
    bool cycle;                 /* the hosts' shifts could not satisfy every message */
    int64_t t0;                 /* the job's earliest time: ts 0 */
    FILE *out;
    bool first;                 /* no event written yet (no comma) */
    char *err;
    size_t errlen;
} merge_t;

/*  Sets the merge's error message; returns -1. */
static int s_fail(merge_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int s_fail(merge_t *m, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->err, m->errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/*  The calls whose time is spent waiting for other tasks (messages, a barrier's last
 *  member, a collective's data): XPVM's "waiting"; every other call is "overhead". */
static bool s_is_wait(const char *name, int len)
{
    static const char *const waits[] = {
        "pvm_recv", "pvm_trecv", "pvm_precv", "pvm_barrier", "pvm_reduce", "pvm_bcast",
        "pvm_gather", "pvm_scatter", "pvm_freezegroup", "pvm_hostsync", NULL,
    };
    for (int k = 0; waits[k]; k++)
        if ((int)strlen(waits[k]) == len && !memcmp(waits[k], name, (size_t)len))
            return true;
    return false;
}

/* ------------------------------------------------------------------ loading */

/*  The header of t's file (swap: the writer's byte order is not ours).  0, 1 when it is
 *  not all there and the merge is partial (the file is skipped), or -1. */
static int s_header(merge_t *m, mtask_t *t, size_t size, bool *swap)
{
    gimpi_tev_file_t h;
    if (size < sizeof h && m->partial)
        return 1;
    if (size < sizeof h)
        return s_fail(m, "%s: truncated: %zu bytes, a trace file's header alone is %zu",
                      t->name, size, sizeof h);
    memcpy(&h, t->buf, sizeof h);
    *swap = h.magic == __builtin_bswap32(GIMPI_TEV_MAGIC);
    if (h.magic != GIMPI_TEV_MAGIC && !*swap)
        return s_fail(m, "%s: not a gimpi trace file (magic 0x%08x)", t->name, h.magic);
    if (*swap) {
        h.version = __builtin_bswap32(h.version);
        h.tid = (int32_t)__builtin_bswap32((uint32_t)h.tid);
        h.pid = (int32_t)__builtin_bswap32((uint32_t)h.pid);
        h.offset_ns = (int64_t)__builtin_bswap64((uint64_t)h.offset_ns);
        h.offset_err_ns = (int64_t)__builtin_bswap64((uint64_t)h.offset_err_ns);
        h.start_ns = (int64_t)__builtin_bswap64((uint64_t)h.start_ns);
    }
    if (h.version != GIMPI_TEV_VERSION)
        return s_fail(m, "%s: trace format version %u, this merger reads version %u",
                      t->name, h.version, GIMPI_TEV_VERSION);
    if (!memchr(h.host, 0, sizeof h.host) || !memchr(h.program, 0, sizeof h.program))
        return s_fail(m, "%s: bad header: host or program name not terminated", t->name);
    if (h.offset_ns <= -MERGE_MAX_OFFSET || h.offset_ns >= MERGE_MAX_OFFSET
        || h.offset_err_ns < 0 || h.offset_err_ns >= MERGE_MAX_OFFSET
        || h.start_ns < 0 || h.start_ns >= MERGE_MAX_TIME)
        return s_fail(m, "%s: bad header: clock offset %lld (error %lld) or start %lld out "
                      "of range", t->name, (long long)h.offset_ns,
                      (long long)h.offset_err_ns, (long long)h.start_ns);
    t->tid = h.tid;
    t->pid = h.pid;
    t->off = h.offset_ns;
    t->err = h.offset_err_ns;
    t->begin = h.start_ns + h.offset_ns;
    snprintf(t->host, sizeof t->host, "%s", h.host[0] ? h.host : "(unknown)");
    snprintf(t->program, sizeof t->program, "%s", h.program);
    return 0;
}

/*  Appends a record to t; -1 when out of memory. */
static int s_push(merge_t *m, mtask_t *t, const mrec_t *r)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        mrec_t *recs = realloc(t->recs, cap * sizeof *recs);
        if (!recs)
            return s_fail(m, "%s: out of memory", t->name);
        t->recs = recs;
        t->cap = cap;
    }
    t->recs[t->n++] = *r;
    return 0;
}

/*  The records of t's file after its header: each checked, decoded and put on the
 *  reference clock, times kept from going backwards. */
static int s_records(merge_t *m, mtask_t *t, size_t size, bool swap)
{
    size_t at = sizeof(gimpi_tev_file_t);
    int64_t prev = INT64_MIN;
    while (at < size) {
        gimpi_tev_rec_t h;
        if (size - at < sizeof h && m->partial)
            break;
        if (size - at < sizeof h)
            return s_fail(m, "%s: truncated: a record at byte %zu has %zu of its %zu "
                          "bytes", t->name, at, size - at, sizeof h);
        memcpy(&h, t->buf + at, sizeof h);
        if (swap) {
            h.len = __builtin_bswap32(h.len);
            h.kind = __builtin_bswap16(h.kind);
            h.ev = __builtin_bswap16(h.ev);
            h.t_ns = (int64_t)__builtin_bswap64((uint64_t)h.t_ns);
            for (int k = 0; k < GIMPI_TEV_INTS; k++)
                h.i[k] = (int32_t)__builtin_bswap32((uint32_t)h.i[k]);
            h.slen = __builtin_bswap16(h.slen);
        }
        if (h.len < sizeof h || h.len % 8 || h.slen > h.len - sizeof h)
            return s_fail(m, "%s: bad record at byte %zu: length %u (string %u)", t->name,
                          at, h.len, h.slen);
        if (h.len > size - at && m->partial)
            break;
        if (h.len > size - at)
            return s_fail(m, "%s: truncated: the record at byte %zu is %u bytes, %zu are "
                          "left", t->name, at, h.len, size - at);
        if (h.kind < GIMPI_TEV_CALL_BEGIN || h.kind > GIMPI_TEV_LOST)
            return s_fail(m, "%s: bad record at byte %zu: unknown kind %u", t->name, at,
                          h.kind);
        if (h.t_ns < 0 || h.t_ns >= MERGE_MAX_TIME)
            return s_fail(m, "%s: bad record at byte %zu: time %lld out of range", t->name,
                          at, (long long)h.t_ns);
        mrec_t r = { .kind = h.kind, .ev = h.ev, .t = h.t_ns + t->off,
                     .s = (const char *)t->buf + at + sizeof h, .slen = h.slen };
        memcpy(r.i, h.i, sizeof r.i);
        if (r.t < prev)
            r.t = prev;
        prev = r.t;
        if (s_push(m, t, &r) < 0)
            return -1;
        at += h.len;
    }
    m->cut += at < size;
    if (t->n && t->recs[0].t < t->begin)
        t->begin = t->recs[0].t;
    return 0;
}

/*  Loads dir/name as the next task. */
static int s_load(merge_t *m, const char *dir, const char *name)
{
    mtask_t *t = &m->tasks[m->ntasks];
    memset(t, 0, sizeof *t);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    t->name = strdup(path);
    if (!t->name)
        return s_fail(m, "out of memory");
    m->ntasks++;
    FILE *f = fopen(path, "rb");
    if (!f)
        return s_fail(m, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MERGE_MAX_FILE) {
        fclose(f);
        return s_fail(m, "%s: not a regular file of at most %lld bytes", path,
                      (long long)MERGE_MAX_FILE);
    }
    size_t size = (size_t)st.st_size;
    t->buf = malloc(size ? size : 1);
    size_t got = t->buf ? fread(t->buf, 1, size, f) : 0;
    fclose(f);
    if (!t->buf)
        return s_fail(m, "%s: out of memory", path);
    if (got != size)
        return s_fail(m, "%s: read %zu of %zu bytes", path, got, size);
    bool swap;
    int rc = s_header(m, t, size, &swap);
    if (rc == 1) {                      /* partial: a file not begun yet */
        free(t->name);
        free(t->buf);
        m->ntasks--;
        m->skipped++;
        return 0;
    }
    if (rc < 0 || s_records(m, t, size, swap) < 0)
        return -1;
    for (int k = 0; k < m->ntasks - 1; k++)
        if (m->tasks[k].tid == t->tid)
            return s_fail(m, "%s: task t%x is also in %s", path, (unsigned)t->tid,
                          m->tasks[k].name);
    return 0;
}

/*  qsort: file names in byte order. */
static int s_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*  Loads every *.gtev of dir, in name order. */
static int s_load_dir(merge_t *m, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return s_fail(m, "%s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0, sl = strlen(GIMPI_TEV_SUFFIX);
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (e->d_name[0] == '.' || l <= sl || strcmp(e->d_name + l - sl, GIMPI_TEV_SUFFIX))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = s_fail(m, "out of memory");
                break;
            }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name)))
            rc = s_fail(m, "out of memory");
        else
            n++;
    }
    closedir(d);
    if (rc == 0 && n == 0)
        rc = s_fail(m, "%s: no %s file: no task of the job was traced", dir,
                    GIMPI_TEV_SUFFIX);
    if (rc == 0) {
        qsort(names, n, sizeof *names, s_cmp_names);
        m->tasks = calloc(n, sizeof *m->tasks);
        if (!m->tasks)
            rc = s_fail(m, "out of memory");
    }
    for (size_t k = 0; rc == 0 && k < n; k++)
        rc = s_load(m, dir, names[k]);
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    free(names);
    return rc;
}

/* ------------------------------------------------------------------ hosts, messages, clocks */

/*  qsort: tasks by tid. */
static int s_cmp_tasks(const void *a, const void *b)
{
    const mtask_t *x = a, *y = b;
    return (x->tid > y->tid) - (x->tid < y->tid);
}

/*  qsort: hosts by their smallest task tid. */
static int s_cmp_hosts(const void *a, const void *b)
{
    const mhost_t *x = a, *y = b;
    return (x->mintid > y->mintid) - (x->mintid < y->mintid);
}

/*  The tasks in tid order, numbered; the hosts by name, in order of their first task. */
static int s_hosts(merge_t *m)
{
    qsort(m->tasks, (size_t)m->ntasks, sizeof *m->tasks, s_cmp_tasks);
    m->hosts = calloc((size_t)m->ntasks, sizeof *m->hosts);
    if (!m->hosts)
        return s_fail(m, "out of memory");
    for (int k = 0; k < m->ntasks; k++) {
        mtask_t *t = &m->tasks[k];
        t->thread = k + 1;
        int h = 0;
        while (h < m->nhosts && strcmp(m->hosts[h].name, t->host))
            h++;
        if (h == m->nhosts)
            m->hosts[m->nhosts++] = (mhost_t){ .name = t->host, .mintid = t->tid,
                                               .off = t->off, .err = t->err };
        else if (t->err > m->hosts[h].err)
            m->hosts[h].err = t->err;
    }
    qsort(m->hosts, (size_t)m->nhosts, sizeof *m->hosts, s_cmp_hosts);
    for (int k = 0; k < m->ntasks; k++)
        for (int h = 0; h < m->nhosts; h++)
            if (!strcmp(m->hosts[h].name, m->tasks[k].host))
                m->tasks[k].hostix = h;
    return 0;
}

/*  qsort: message ends by (src, dst, ctx, seq). */
static int s_cmp_ends(const void *a, const void *b)
{
    const mend_t *x = a, *y = b;
    if (x->src != y->src)
        return (x->src > y->src) - (x->src < y->src);
    if (x->dst != y->dst)
        return (x->dst > y->dst) - (x->dst < y->dst);
    if (x->ctx != y->ctx)
        return (x->ctx > y->ctx) - (x->ctx < y->ctx);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/*  The sends (kind SEND) or receives (RECV) of every task as keyed ends. */
static mend_t *s_ends(merge_t *m, int kind, size_t *count)
{
    size_t n = 0;
    for (int k = 0; k < m->ntasks; k++)
        for (size_t r = 0; r < m->tasks[k].n; r++)
            n += m->tasks[k].recs[r].kind == kind;
    mend_t *e = malloc((n ? n : 1) * sizeof *e);
    if (!e)
        return NULL;
    n = 0;
    for (int k = 0; k < m->ntasks; k++)
        for (size_t r = 0; r < m->tasks[k].n; r++) {
            const mrec_t *x = &m->tasks[k].recs[r];
            if (x->kind != kind)
                continue;
            int32_t me = m->tasks[k].tid;
            e[n++] = (mend_t){ .src = kind == GIMPI_TEV_SEND ? me : x->i[0],
                               .dst = kind == GIMPI_TEV_SEND ? x->i[0] : me,
                               .ctx = x->i[2], .seq = x->i[4], .task = k, .rec = r };
        }
    qsort(e, n, sizeof *e, s_cmp_ends);
    *count = n;
    return e;
}

/*  Each host's shift: the least non-negative shifts such that, for every message between
 *  two hosts, shift(receiver's) - shift(sender's) >= send time - receive time (longest
 *  paths by Bellman-Ford over the messages).  A message that would need more than an
 *  hour, or shifts that keep growing (a cycle: the clocks disagree both ways), is left to
 *  the flow's own clamp. */
static void s_shifts(merge_t *m, const mend_t *s, const mend_t *r, const size_t *pair,
                     size_t npairs)
{
    for (int round = 0; round <= m->nhosts; round++) {
        bool changed = false;
        for (size_t p = 0; p < npairs; p++) {
            const mend_t *a = &s[pair[2 * p]], *b = &r[pair[2 * p + 1]];
            mhost_t *ha = &m->hosts[m->tasks[a->task].hostix];
            mhost_t *hb = &m->hosts[m->tasks[b->task].hostix];
            int64_t need = m->tasks[a->task].recs[a->rec].t - m->tasks[b->task].recs[b->rec].t;
            if (ha == hb || need > MERGE_MAX_SHIFT || hb->shift >= ha->shift + need)
                continue;
            if (round == m->nhosts || ha->shift + need > MERGE_MAX_SHIFT) {
                m->cycle = true;
                return;
            }
            hb->shift = ha->shift + need;
            changed = true;
        }
        if (!changed)
            return;
    }
}

/*  Matches sends to receives, shifts the hosts' clocks, and gives every matched message
 *  its id and the drawn end of its flow (never before its start). */
static int s_messages(merge_t *m)
{
    size_t ns, nr;
    mend_t *s = s_ends(m, GIMPI_TEV_SEND, &ns);
    mend_t *r = s_ends(m, GIMPI_TEV_RECV, &nr);
    size_t *pair = malloc(2 * (ns < nr ? ns + 1 : nr + 1) * sizeof *pair);
    if (!s || !r || !pair) {
        free(s), free(r), free(pair);
        return s_fail(m, "out of memory");
    }
    size_t a = 0, b = 0, np = 0;
    while (a < ns && b < nr) {
        int c = s_cmp_ends(&s[a], &r[b]);
        if (c == 0) {
            pair[2 * np] = a++;
            pair[2 * np++ + 1] = b++;
        } else if (c < 0)
            a++, m->unreceived++;
        else
            b++, m->unsent++;
    }
    m->unreceived += (int)(ns - a);
    m->unsent += (int)(nr - b);
    s_shifts(m, s, r, pair, np);
    for (int k = 0; k < m->ntasks; k++) {
        mtask_t *t = &m->tasks[k];
        int64_t shift = m->hosts[t->hostix].shift;
        t->begin += shift;
        for (size_t x = 0; x < t->n; x++)
            t->recs[x].t += shift;
    }
    for (size_t p = 0; p < np; p++) {
        mrec_t *x = &m->tasks[s[pair[2 * p]].task].recs[s[pair[2 * p]].rec];
        mrec_t *y = &m->tasks[r[pair[2 * p + 1]].task].recs[r[pair[2 * p + 1]].rec];
        x->flow = y->flow = (int)p + 1;
        y->ft = y->t;
        if (y->ft < x->t) {
            y->ft = x->t;
            m->clamped++;
        }
    }
    m->nmsgs = (int)np;
    free(s), free(r), free(pair);
    return 0;
}

/* ------------------------------------------------------------------ writing */

/*  Writes a JSON string: quotes, escapes, and any byte past ASCII as its Latin-1 code
 *  point, so that the file is valid whatever a trace's strings hold. */
static void s_jstr(FILE *o, const char *s, int len)
{
    fputc('"', o);
    for (int k = 0; k < len; k++) {
        unsigned char c = (unsigned char)s[k];
        if (c == '"' || c == '\\')
            fprintf(o, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(o, "\\u%04x", c);
        else
            fputc(c, o);
    }
    fputc('"', o);
}

/*  Writes a time on the job's clock (ns) as microseconds since its start, exactly. */
static void s_us(FILE *o, int64_t ns)
{
    fprintf(o, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

/*  Starts one event of task t: the separator and the fields every event has. */
static void s_ev(merge_t *m, const mtask_t *t, const char *ph, const char *name, int nlen,
                 const char *cat, int64_t at)
{
    fprintf(m->out, "%s{\"ph\":\"%s\",\"name\":", m->first ? "\n" : ",\n", ph);
    m->first = false;
    s_jstr(m->out, name, nlen);
    if (cat)
        fprintf(m->out, ",\"cat\":\"%s\"", cat);
    fprintf(m->out, ",\"pid\":%d,\"tid\":%d,\"ts\":", t->hostix + 1, t->thread);
    s_us(m->out, at - m->t0);
}

/*  A slice of task t from a to b (ns); args is the slice's args object's inside or NULL. */
static void s_slice(merge_t *m, const mtask_t *t, const char *name, int nlen, const char *cat,
                    int64_t a, int64_t b)
{
    s_ev(m, t, "X", name, nlen, cat, a);
    fputs(",\"dur\":", m->out);
    s_us(m->out, b - a);
    fprintf(m->out, ",\"cname\":\"%s\"", !strcmp(cat, "compute") ? "good"
                                          : !strcmp(cat, "wait") ? "terrible" : "yellow");
}

/*  One slice of a task: a call (its BEGIN, its END or NULL when it never ended) or, with
 *  no BEGIN, computing between calls. */
typedef struct {
    int64_t a, b;
    const mrec_t *begin, *end;
    size_t order;               /* when it was made: ties' last key */
} mslice_t;

/*  qsort: slices by start, the longer first (a call before the calls it made: a viewer
 *  that sorts by time alone, stably, sees the parent open first), then as made. */
static int s_cmp_slices(const void *x, const void *y)
{
    const mslice_t *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b > q->b ? -1 : 1;
    return (p->order > q->order) - (p->order < q->order);
}

/*  Writes slice sl of task t: a call with its arguments and return value, or computing. */
static void s_write_slice(merge_t *m, const mtask_t *t, const mslice_t *sl)
{
    const mrec_t *b = sl->begin;
    if (!b) {
        s_slice(m, t, "compute", 7, "compute", sl->a, sl->b);
        fputc('}', m->out);
        return;
    }
    const char *name = b->slen ? b->s : "pvm_call";
    int nlen = b->slen ? b->slen : 8;
    s_slice(m, t, name, nlen, s_is_wait(name, nlen) ? "wait" : "overhead", sl->a, sl->b);
    fprintf(m->out, ",\"args\":{\"ev\":%d,\"a\":[%d,%d,%d,%d,%d,%d]", b->ev, b->i[0], b->i[1],
            b->i[2], b->i[3], b->i[4], b->i[5]);
    if (sl->end)
        fprintf(m->out, ",\"ret\":%d}}", sl->end->i[0]);
    else
        fputs(",\"unfinished\":true}}", m->out);
}

/*  Writes a tid as the string "t<hex>". */
static void s_tid(FILE *o, int32_t tid)
{
    fprintf(o, "\"t%x\"", (unsigned)tid);
}

/*  A message's flow end (SEND: its start, RECV: its end) in task t. */
static void s_flow(merge_t *m, const mtask_t *t, const mrec_t *r)
{
    bool send = r->kind == GIMPI_TEV_SEND;
    s_ev(m, t, send ? "s" : "f", "msg", 3, "msg", send ? r->t : r->ft);
    fprintf(m->out, "%s,\"id\":%d,\"args\":{\"tag\":%d,\"bytes\":%d,\"ctx\":%d,\"seq\":%d,"
            "\"src\":", send ? "" : ",\"bp\":\"e\"", r->flow, r->i[1], r->i[3], r->i[2],
            r->i[4]);
    s_tid(m->out, send ? t->tid : r->i[0]);
    fputs(",\"dst\":", m->out);
    s_tid(m->out, send ? r->i[0] : t->tid);
    fputs("}}", m->out);
}

/*  A point event of task t (group, collective, spawn, exit, host, lost records). */
static void s_instant(merge_t *m, const mtask_t *t, const mrec_t *r)
{
    /* per kind: name, category, the string's arg, i[0]'s (a tid when its name is in
       tids), i[1]'s */
    static const struct {
        const char *name, *cat, *str, *i0, *i1;
    } kinds[] = {
        [GIMPI_TEV_JOIN] = { "join", "group", "group", "instance", NULL },
        [GIMPI_TEV_LEAVE] = { "leave", "group", "group", NULL, NULL },
        [GIMPI_TEV_BARRIER_IN] = { "barrier_in", "group", "group", "count", NULL },
        [GIMPI_TEV_BARRIER_OUT] = { "barrier_out", "group", "group", "result", NULL },
        [GIMPI_TEV_COLL_SEND] = { "coll_send", "msg", "op", "dst", "bytes" },
        [GIMPI_TEV_SPAWN] = { "spawn", "task", "program", "child", NULL },
        [GIMPI_TEV_EXIT] = { "exit", "task", NULL, "status", NULL },
        [GIMPI_TEV_HOST_ADD] = { "host_add", "host", "host", "dtid", NULL },
        [GIMPI_TEV_HOST_DEL] = { "host_del", "host", "host", "dtid", NULL },
        [GIMPI_TEV_LOST] = { "lost", "task", NULL, "records", NULL },
    };
    const char *tids = " dst child dtid ";
    FILE *o = m->out;
    int k = r->kind;
    s_ev(m, t, "i", kinds[k].name, (int)strlen(kinds[k].name), kinds[k].cat, r->t);
    fprintf(o, ",\"s\":\"%s\",\"args\":{", !strcmp(kinds[k].cat, "host") ? "p" : "t");
    if (kinds[k].str) {
        fprintf(o, "\"%s\":", kinds[k].str);
        s_jstr(o, r->s, r->slen);
    }
    if (kinds[k].i0) {
        char word[16];
        snprintf(word, sizeof word, " %s ", kinds[k].i0);
        fprintf(o, "%s\"%s\":", kinds[k].str ? "," : "", kinds[k].i0);
        if (strstr(tids, word))
            s_tid(o, r->i[0]);
        else
            fprintf(o, "%d", r->i[0]);
    }
    if (kinds[k].i1)
        fprintf(o, ",\"%s\":%d", kinds[k].i1, r->i[1]);
    fputs("}}", o);
}

/*  An END of call ev: the index of the open call it closes (the innermost of that
 *  number), or -1 when none is open (its BEGIN was lost). */
static int s_find_open(const mrec_t *const *stack, int depth, int ev)
{
    for (int k = depth - 1; k >= 0; k--)
        if (stack[k]->ev == ev)
            return k;
    return -1;
}

/*  Adds a slice to sl[*n]. */
static void s_add_slice(mslice_t *sl, size_t *n, int64_t a, int64_t b, const mrec_t *begin,
                        const mrec_t *end)
{
    sl[*n] = (mslice_t){ .a = a, .b = b, .begin = begin, .end = end, .order = *n };
    ++*n;
}

/*  The slices of task t (at most one per BEGIN, and one of computing before each
 *  top-level call and after the last): calls nest as their records say; a call still open
 *  when an outer one ends, or at the end (the task died in it, the ring lost its END),
 *  ends there, unfinished.  NULL when out of memory. */
static mslice_t *s_slices(merge_t *m, const mtask_t *t, size_t *count)
{
    size_t nb = 1, n = 0;
    for (size_t x = 0; x < t->n; x++)
        nb += t->recs[x].kind == GIMPI_TEV_CALL_BEGIN;
    mslice_t *sl = malloc(2 * nb * sizeof *sl);
    if (!sl)
        return NULL;
    const mrec_t *stack[MERGE_MAX_DEPTH];
    int depth = 0;
    int64_t idle = t->begin, last = t->begin;
    for (size_t x = 0; x < t->n; x++) {
        const mrec_t *r = &t->recs[x];
        last = r->t;
        if (r->kind == GIMPI_TEV_CALL_BEGIN) {
            if (depth == 0 && r->t > idle)
                s_add_slice(sl, &n, idle, r->t, NULL, NULL);
            if (depth == MERGE_MAX_DEPTH)
                m->dropped++;
            else
                stack[depth++] = r;
        } else if (r->kind == GIMPI_TEV_CALL_END) {
            int k = s_find_open(stack, depth, r->ev);
            if (k < 0)
                m->dropped++;
            while (k >= 0 && depth > k) {
                depth--;
                s_add_slice(sl, &n, stack[depth]->t, r->t, stack[depth],
                            depth == k ? r : NULL);
            }
            if (k >= 0 && depth == 0)
                idle = r->t;
        }
    }
    if (depth == 0 && last > idle)
        s_add_slice(sl, &n, idle, last, NULL, NULL);
    while (depth > 0) {
        depth--;
        s_add_slice(sl, &n, stack[depth]->t, last, stack[depth], NULL);
    }
    qsort(sl, n, sizeof *sl, s_cmp_slices);
    *count = n;
    return sl;
}

/*  Writes record r of task t when it is a point event (a message's end, a counter, an
 *  instant); nothing for a call's BEGIN or END (slices) or a message never matched. */
static void s_write_point(merge_t *m, const mtask_t *t, const mrec_t *r)
{
    switch (r->kind) {
    case GIMPI_TEV_CALL_BEGIN:
    case GIMPI_TEV_CALL_END:
        break;
    case GIMPI_TEV_SEND:
    case GIMPI_TEV_RECV:
        if (r->flow)
            s_flow(m, t, r);
        break;
    case GIMPI_TEV_QUEUE:
        s_ev(m, t, "C", "queue", 5, NULL, r->t);
        fprintf(m->out, ",\"id\":\"t%x\",\"args\":{\"messages\":%d}}", (unsigned)t->tid,
                r->i[0]);
        break;
    default:
        m->lost += r->kind == GIMPI_TEV_LOST ? r->i[0] : 0;
        s_instant(m, t, r);
        break;
    }
}

/*  Every event of task t in time order, a slice before a point event at its start (so
 *  that a flow binds to the slice it is in, for a viewer that sorts stably by time). */
static int s_write_task(merge_t *m, const mtask_t *t)
{
    size_t ns, i = 0, x = 0;
    mslice_t *sl = s_slices(m, t, &ns);
    if (!sl)
        return s_fail(m, "out of memory");
    while (i < ns || x < t->n) {
        const mrec_t *r = x < t->n ? &t->recs[x] : NULL;
        int64_t pt = !r ? INT64_MAX : r->kind == GIMPI_TEV_RECV && r->flow ? r->ft : r->t;
        if (i < ns && sl[i].a <= pt)
            s_write_slice(m, t, &sl[i++]);
        else
            s_write_point(m, t, &t->recs[x++]);
    }
    free(sl);
    return 0;
}

/*  The metadata events: each host's process and each task's thread, named and ordered. */
static void s_write_names(merge_t *m)
{
    FILE *o = m->out;
    for (int h = 0; h < m->nhosts; h++) {
        fprintf(o, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"name\":", m->first ? "\n" : ",\n", h + 1);
        m->first = false;
        s_jstr(o, m->hosts[h].name, (int)strlen(m->hosts[h].name));
        fprintf(o, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
                "\"args\":{\"sort_index\":%d}}", h + 1, h + 1);
    }
    for (int k = 0; k < m->ntasks; k++) {
        const mtask_t *t = &m->tasks[k];
        char name[96];
        int len = snprintf(name, sizeof name, "t%x %s", (unsigned)t->tid, t->program);
        fprintf(o, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"name\":", t->hostix + 1, t->thread);
        s_jstr(o, name, len < (int)sizeof name ? len : (int)sizeof name - 1);
        fprintf(o, "}},\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":%d,\"tid\":%d,"
                "\"args\":{\"sort_index\":%d}}", t->hostix + 1, t->thread, t->thread);
    }
}

/*  otherData.gimpi: the tasks, the hosts' clocks and what the merge corrected. */
static void s_write_other(merge_t *m)
{
    FILE *o = m->out;
    int64_t maxerr = 0;
    for (int h = 0; h < m->nhosts; h++)
        maxerr = m->hosts[h].err > maxerr ? m->hosts[h].err : maxerr;
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"gimpi\":{\"version\":1,"
          "\n\"tasks\":[", o);
    for (int k = 0; k < m->ntasks; k++) {
        const mtask_t *t = &m->tasks[k];
        fprintf(o, "%s{\"tid\":\"t%x\",\"host\":", k ? ",\n" : "\n", (unsigned)t->tid);
        s_jstr(o, t->host, (int)strlen(t->host));
        fputs(",\"program\":", o);
        s_jstr(o, t->program, (int)strlen(t->program));
        fprintf(o, ",\"pid\":%d,\"process\":%d,\"thread\":%d,\"records\":%zu}", t->pid,
                t->hostix + 1, t->thread, t->n);
    }
    fputs("],\n\"hosts\":[", o);
    bool beyond = false, shifted = false;
    for (int h = 0; h < m->nhosts; h++) {
        const mhost_t *x = &m->hosts[h];
        bool within = x->shift <= x->err + maxerr;
        beyond |= !within;
        shifted |= x->shift != 0;
        fprintf(o, "%s{\"name\":", h ? ",\n" : "\n");
        s_jstr(o, x->name, (int)strlen(x->name));
        fprintf(o, ",\"process\":%d,\"offset_ns\":%lld,\"offset_err_ns\":%lld,"
                "\"shift_ns\":%lld,\"shift_within_error\":%s}", h + 1, (long long)x->off,
                (long long)x->err, (long long)x->shift, within ? "true" : "false");
    }
    fprintf(o, "],\n\"messages\":%d,\"unmatched_sends\":%d,\"unmatched_receives\":%d,"
            "\"clock\":{\"corrected\":%s,\"beyond_error\":%s,\"inconsistent\":%s,"
            "\"flows_clamped\":%d},\"lost_records\":%ld,\"unpaired_calls\":%d,"
            "\"files_cut_short\":%d,\"files_skipped\":%d,\"t0_ns\":%lld}}}\n", m->nmsgs,
            m->unreceived, m->unsent, shifted || m->clamped ? "true" : "false",
            beyond ? "true" : "false", m->cycle ? "true" : "false", m->clamped, m->lost,
            m->dropped, m->cut, m->skipped, (long long)m->t0);
}

/*  Writes the whole JSON document to m->out.  0, or -1 when out of memory. */
static int s_write(merge_t *m)
{
    m->first = true;
    fputs("{\"traceEvents\":[", m->out);
    s_write_names(m);
    for (int k = 0; k < m->ntasks; k++)
        if (s_write_task(m, &m->tasks[k]) < 0)
            return -1;
    s_write_other(m);
    return 0;
}

/*  Frees what the merge holds. */
static void s_free(merge_t *m)
{
    for (int k = 0; k < m->ntasks; k++) {
        free(m->tasks[k].name);
        free(m->tasks[k].buf);
        free(m->tasks[k].recs);
    }
    free(m->tasks);
    free(m->hosts);
}

/*  Writes the merged trace to path ("-": standard output) through a temporary file. */
static int s_output(merge_t *m, const char *path)
{
    if (!strcmp(path, "-")) {
        m->out = stdout;
        if (s_write(m) < 0)
            return -1;
        return fflush(stdout) == 0 && !ferror(stdout) ? 0
               : s_fail(m, "standard output: %s", strerror(errno));
    }
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return s_fail(m, "%s: name too long", path);
    m->out = fopen(tmp, "w");
    if (!m->out)
        return s_fail(m, "%s: %s", tmp, strerror(errno));
    int wrote = s_write(m);
    bool bad = ferror(m->out) != 0;
    int e = errno;
    if (fclose(m->out) != 0 && !bad)
        bad = true, e = errno;
    m->out = NULL;
    if (wrote < 0) {
        unlink(tmp);
        return -1;
    }
    if (bad || rename(tmp, path) < 0) {
        e = bad ? e : errno;
        unlink(tmp);
        return s_fail(m, "%s: %s", path, strerror(e));
    }
    return 0;
}

int trace_merge(const char *dir, const char *json_out, char *err, size_t errlen)
{
    return trace_merge_flags(dir, json_out, 0, err, errlen) < 0 ? -1 : 0;
}

int trace_merge_flags(const char *dir, const char *json_out, int flags, char *err,
                      size_t errlen)
{
    assert(dir && json_out && err);
    merge_t m = { .err = err, .errlen = errlen, .partial = flags & TRACE_MERGE_PARTIAL };
    err[0] = 0;
    int rc = s_load_dir(&m, dir);
    if (rc == 0 && m.ntasks == 0)
        rc = s_fail(&m, "%s: no task's file has its whole header yet", dir);
    if (rc == 0)
        rc = s_hosts(&m);
    if (rc == 0)
        rc = s_messages(&m);
    if (rc == 0) {
        m.t0 = INT64_MAX;
        for (int k = 0; k < m.ntasks; k++)
            m.t0 = m.tasks[k].begin < m.t0 ? m.tasks[k].begin : m.t0;
        rc = s_output(&m, json_out);
    }
    s_free(&m);
    return rc < 0 ? -1 : m.cut + m.skipped;
}

/*  gimpi-trace merge's synopsis. */
static void s_merge_usage(FILE *to)
{
    fputs("usage: gimpi-trace merge DIR [-o FILE.json] [--partial]\n"
          "  merges the per-task trace files DIR/*.gtev of a job (written by tasks run\n"
          "  with GIMPI_TRACE=DIR) into one Chrome trace-event JSON file, which\n"
          "  ui.perfetto.dev and chrome://tracing open (default output: DIR.json);\n"
          "  --partial: the job still runs, or a task died writing: files cut short\n"
          "  are merged up to their last whole record\n", to);
}

int trace_merge_main(int argc, char **argv)
{
    int i = 1;
    if (i < argc && !strcmp(argv[i], "merge"))
        i++;
    const char *dir = NULL, *out = NULL;
    int flags = 0;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc && argv[i + 1][0])
            out = argv[++i];
        else if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "--partial"))
            flags |= TRACE_MERGE_PARTIAL;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            s_merge_usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "gimpi-trace merge: unexpected %s\n", argv[i]);
            s_merge_usage(stderr);
            return 2;
        } else
            dir = argv[i];
    }
    if (!dir || !dir[0]) {
        s_merge_usage(stderr);
        return 2;
    }
    char def[PATH_MAX], err[PATH_MAX + 256];
    if (!out) {
        size_t l = strlen(dir);
        while (l > 1 && dir[l - 1] == '/')
            l--;
        snprintf(def, sizeof def, "%.*s.json", (int)l, dir);
        out = def;
    }
    int cut = trace_merge_flags(dir, out, flags, err, sizeof err);
    if (cut < 0) {
        fprintf(stderr, "gimpi-trace: %s\n", err);
        return 1;
    }
    if (cut > 0)
        fprintf(stderr, "gimpi-trace: %d file%s of %s cut short: merged up to their last "
                "whole record\n", cut, cut > 1 ? "s" : "", dir);
    return 0;
}
