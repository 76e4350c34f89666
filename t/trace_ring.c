/*  trace_ring.c — the task's trace recorder (base/gimpi_trace.c): the file's header, the
 *  records as gimpi_tev.h lays them out, the ring written out whenever it fills (while
 *  the task runs, not only at the end), the per-peer message numbers, and what happens
 *  when writes fail (a file that cannot grow, a folder that does not exist): records are
 *  counted as lost, a GIMPI_TEV_LOST record says how many, nothing stops or crashes.
 */
#include "gtap.h"
#include "base/gimpi_trace.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/*  What a file holds: its header and counts of records by kind. */
typedef struct {
    gimpi_tev_file_t head;
    int nrec, bykind[32], bad;
    int lost;                   /* the sum of the LOST records' counts */
    int last_seq[4];            /* i[4] of the last SEND records, in order (up to 4) */
    int nsend;
    char firstname[64];         /* the string of the first record */
} summary_t;

/*  Reads and checks a trace file; 0 or -1 (cannot open it). */
static int s_read(const char *path, summary_t *s)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    if (fread(&s->head, sizeof s->head, 1, f) != 1)
        s->bad++;
    gimpi_tev_rec_t r;
    while (fread(&r, sizeof r, 1, f) == 1) {
        if (r.len < sizeof r || r.len % 8 || r.len - sizeof r < r.slen || r.kind >= 32) {
            s->bad++;
            break;
        }
        char str[2048] = "";
        size_t rest = r.len - sizeof r;
        if (rest > sizeof str || fread(str, 1, rest, f) != rest) {
            s->bad++;
            break;
        }
        if (s->nrec == 0)
            snprintf(s->firstname, sizeof s->firstname, "%.*s", (int)r.slen, str);
        s->nrec++;
        s->bykind[r.kind]++;
        if (r.kind == GIMPI_TEV_LOST)
            s->lost += r.i[0];
        if (r.kind == GIMPI_TEV_SEND && s->nsend < 4)
            s->last_seq[s->nsend++] = r.i[4];
    }
    fclose(f);
    return 0;
}

/*  The size of a file, -1 when it does not exist. */
static long s_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int main(void)
{
    plan(NO_PLAN);
    char dir[] = "/tmp/trace_ring.XXXXXX";
    if (!mkdtemp(dir))
        BAIL_OUT("mkdtemp");
    char path[256];
    snprintf(path, sizeof path, "%s/40005.gtev", dir);

    /* header, records, written when the ring fills */
    setenv("GIMPI_TRACE_OFFSET", "1500,20", 1);
    gimpi_trace_t *t = gimpi_trace_new(dir, 4096);
    ok(t != NULL, "a recorder with a 4 KiB ring");
    gimpi_trace_set_task(t, 0x40005, "/some/where/prog");
    ok(s_size(path) < 0, "nothing is written before the ring fills");
    int args[3] = { 1, 2, 3 };
    for (int k = 0; k < 500; k++)
        gimpi_trace_rec(t, GIMPI_TEV_CALL_BEGIN, 47, args, 3, "pvm_send");
    long mid = s_size(path);
    cmp_ok(mid, ">", (long)sizeof(gimpi_tev_file_t) + 4096,
           "the full ring went to the file while recording (%ld bytes)", mid);
    gimpi_trace_send(t, 0x40007, 5, 0, 8);
    gimpi_trace_send(t, 0x40007, 5, 0, 8);
    gimpi_trace_send(t, 0x40008, 5, 0, 8);
    cmp_ok(gimpi_trace_arrive(t, 0x40007), "==", 1, "the first arrival from a task is 1");
    cmp_ok(gimpi_trace_arrive(t, 0x40007), "==", 2, "the second is 2");
    cmp_ok(gimpi_trace_arrive(t, 0x40008), "==", 1, "another task counts on its own");
    gimpi_trace_destroy(&t);
    ok(t == NULL, "destroy nulls the pointer");
    summary_t s;
    ok(s_read(path, &s) == 0 && !s.bad, "the file reads back record by record");
    ok(s.head.magic == GIMPI_TEV_MAGIC && s.head.version == GIMPI_TEV_VERSION,
       "header: magic and version");
    ok(s.head.tid == 0x40005 && s.head.pid == getpid(), "header: tid and pid");
    is(s.head.program, "prog", "header: the program's basename");
    ok(s.head.host[0] != 0, "header: a host name (%s)", s.head.host);
    ok(s.head.offset_ns == 1500 && s.head.offset_err_ns == 20,
       "header: the offset of GIMPI_TRACE_OFFSET");
    ok(s.head.start_ns > 0, "header: the start time");
    cmp_ok(s.bykind[GIMPI_TEV_CALL_BEGIN], "==", 500, "all 500 call records are there");
    is(s.firstname, "pvm_send", "with their string");
    ok(s.nsend == 3 && s.last_seq[0] == 1 && s.last_seq[1] == 2 && s.last_seq[2] == 1,
       "SEND seq counts per destination: 1 2 1 (%d %d %d)", s.last_seq[0], s.last_seq[1],
       s.last_seq[2]);
    ok(s.lost == 0, "nothing lost");

    /* a file that cannot grow: records lost, counted, told */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    snprintf(path, sizeof path, "%s/40006.gtev", dir);
    t = gimpi_trace_new(dir, 4096);
    gimpi_trace_set_task(t, 0x40006, "prog");
    gimpi_trace_rec(t, GIMPI_TEV_CALL_BEGIN, 26, NULL, 0, "pvm_mytid");
    gimpi_trace_flush(t);                   /* header and one record */
    small = old;
    small.rlim_cur = (rlim_t)s_size(path);
    setrlimit(RLIMIT_FSIZE, &small);
    for (int k = 0; k < 300; k++)
        gimpi_trace_rec(t, GIMPI_TEV_CALL_BEGIN, 26, NULL, 0, "pvm_mytid");
    ok(gimpi_trace_flush(t) < 0 || gimpi_trace_lost(t) > 0, "writes fail beyond the limit");
    long lost = gimpi_trace_lost(t);
    cmp_ok(lost, ">=", 300, "the records that could not be written are counted (%ld)", lost);
    setrlimit(RLIMIT_FSIZE, &old);
    gimpi_trace_rec(t, GIMPI_TEV_CALL_END, 26, NULL, 0, "pvm_mytid");
    gimpi_trace_destroy(&t);
    ok(s_read(path, &s) == 0 && !s.bad, "the file still reads back");
    cmp_ok(s.bykind[GIMPI_TEV_LOST], "==", 1, "one LOST record");
    cmp_ok(s.lost, "==", lost, "it tells how many were lost");
    ok(s.bykind[GIMPI_TEV_CALL_END] == 1, "the records after it are there");

    /* a folder that does not exist */
    char nodir[300];
    snprintf(nodir, sizeof nodir, "%s/none/deeper", dir);
    t = gimpi_trace_new(nodir, 0);
    gimpi_trace_set_task(t, 0x40009, "prog");
    for (int k = 0; k < 10; k++)
        gimpi_trace_rec(t, GIMPI_TEV_SEND, 0, args, 3, NULL);
    ok(gimpi_trace_flush(t) < 0, "no folder: the flush fails");
    cmp_ok(gimpi_trace_lost(t), "==", 10, "and its records are counted as lost");
    gimpi_trace_destroy(&t);
    pass("no crash, no hang");

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        diag("could not remove %s", dir);
    done_testing();
}
